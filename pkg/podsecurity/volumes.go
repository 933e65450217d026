package podsecurity

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// VolumeType is the name of the kind of volume a source sets, as the API
// spells it (hostPath, configMap, nfs...); "" if it sets none.
func VolumeType(src *corev1.VolumeSource) string {
	v := reflect.ValueOf(src).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			return jsonName(v.Type().Field(i))
		}
	}
	return ""
}

// VolumeTypes lists every kind of volume the API knows, read from the
// type itself so that no new kind is missed.
func VolumeTypes() []string {
	t := reflect.TypeFor[corev1.VolumeSource]()
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if t.Field(i).Type.Kind() == reflect.Pointer {
			out = append(out, jsonName(t.Field(i)))
		}
	}
	return out
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
