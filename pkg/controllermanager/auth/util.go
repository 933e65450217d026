package auth

import (
	"strings"
	"time"
)

// clock is a reconciler's time: time.Now unless a test sets it.
type clock func() time.Time

func (c clock) now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}

func splitKey(key string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(key, "/")
	return namespace, name, ok && namespace != "" && name != ""
}
