package hostpath

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCapacity(t *testing.T) {
	for _, tc := range []struct {
		request string
		params  map[string]string
		want    string
		bad     bool
	}{
		{request: "10Mi", want: "10Mi"},
		{request: "10Mi", params: map[string]string{"other": "x"}, want: "10Mi"},
		{request: "10Mi", params: map[string]string{RoundUpParameter: "64Mi"}, want: "64Mi"},
		{request: "64Mi", params: map[string]string{RoundUpParameter: "64Mi"}, want: "64Mi"},
		{request: "65Mi", params: map[string]string{RoundUpParameter: "64Mi"}, want: "128Mi"},
		{request: "1Gi", params: map[string]string{RoundUpParameter: "1G"}, want: "2G"},
		{request: "10Mi", params: map[string]string{RoundUpParameter: "0"}, bad: true},
		{request: "10Mi", params: map[string]string{RoundUpParameter: "-1Mi"}, bad: true},
		{request: "10Mi", params: map[string]string{RoundUpParameter: "lots"}, bad: true},
	} {
		got, err := Capacity(resource.MustParse(tc.request), tc.params)
		switch {
		case tc.bad && err == nil:
			t.Errorf("%s with %v: %s, want an error", tc.request, tc.params, got.String())
		case !tc.bad && err != nil:
			t.Errorf("%s with %v: %v", tc.request, tc.params, err)
		case !tc.bad:
			if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
				t.Errorf("%s with %v: %s, want %s", tc.request, tc.params, got.String(), tc.want)
			}
		}
	}
}
