package auth

import (
	"strings"
	"time"
)

func nowUnix() int64 { return time.Now().Unix() }

func splitKey(key string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(key, "/")
	return namespace, name, ok && namespace != "" && name != ""
}
