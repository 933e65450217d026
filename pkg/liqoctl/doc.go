// Package liqoctl assembles the liqoctl command line: one subpackage per verb.
package liqoctl
