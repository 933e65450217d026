package kit

// OnlyKey is m with key alone, or nil if m lacks it: what a cache
// transform keeps of an object's labels or annotations when its readers
// look up one key (the rest can be most of a small object, held for every
// object of a kind).
func OnlyKey(m map[string]string, key string) map[string]string {
	v, ok := m[key]
	if !ok {
		return nil
	}
	return map[string]string{key: v}
}
