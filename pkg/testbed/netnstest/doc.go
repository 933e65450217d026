// Package netnstest gives tests network namespaces of their own: the one
// helper of tests that need a kernel's network stack, apart from package
// netns so that nothing outside tests links package testing.
package netnstest
