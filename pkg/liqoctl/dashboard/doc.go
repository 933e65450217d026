// Package dashboard implements `liqoctl dashboard`: a web page on
// 127.0.0.1 that draws the peerings of the kubeconfig's clusters as a
// graph and keeps it live. Each context's cluster is watched with the
// user's own credentials (one informer per kind, no polling); a change
// rebuilds the picture (Build, pure) and the server pushes it to the page
// as a Server-Sent Event. GET /api/state serves the same JSON, for tests
// and scripts. The page (HTML, CSS, JavaScript and SVG written here) is
// embedded in liqoctl: nothing is fetched from anywhere else.
package dashboard
