// Package clientcfg tunes the REST configurations of our controllers'
// clients, local and remote alike.
package clientcfg

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// Default client rate limits: client-go's own 5 requests a second would
// make every offloaded pod wait in line.
const (
	QPS   = 500
	Burst = 1000
)

// Tuned returns a copy of cfg whose clients are not held back by client-go's
// default rate limit, and that name themselves with client-go's default
// user agent (this executable's name and version); a limit or agent set in
// cfg is kept. The agent is set here because only typed clientsets fill it
// in by themselves: an HTTP client built from cfg for several clients
// (Shared) sent Go's own, leaving the other side's audit log unable to
// tell who wrote.
func Tuned(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 {
		c.QPS, c.Burst = QPS, Burst
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return c
}

// Protobuf returns a copy of cfg for client-go's typed clientsets that
// speaks protobuf, which costs both ends a fraction of the CPU of JSON for
// pods. Only for clientsets of built-in kinds: controller-runtime already
// picks protobuf for those by itself when the content type is left empty,
// and custom resources only speak JSON.
func Protobuf(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	if c.ContentType == "" {
		c.ContentType = runtime.ContentTypeProtobuf
		c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	return c
}
