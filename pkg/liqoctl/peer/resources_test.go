package peer

import (
	"reflect"
	"strings"
	"testing"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

// TestOfferedStorageClasses: --storage-classes picks, from a slice, some of
// the classes the provider reported (its default kept as such) and refuses
// one it did not; without a slice it takes the names as given; a bad or
// repeated name is refused; none given leaves the slice's list.
func TestOfferedStorageClasses(t *testing.T) {
	reported := []corev1beta1.StorageType{{StorageClassName: "hdd"}, {StorageClassName: "ssd", Default: true}}
	for _, tc := range []struct {
		name      string
		names     []string
		fromSlice bool
		want      []corev1beta1.StorageType
		wantErr   string
	}{
		{"none given", nil, true, nil, ""},
		{"some of the slice's", []string{"ssd"}, true, []corev1beta1.StorageType{{StorageClassName: "ssd", Default: true}}, ""},
		{"in the order given", []string{"ssd", "hdd"}, true, []corev1beta1.StorageType{{StorageClassName: "ssd", Default: true}, {StorageClassName: "hdd"}}, ""},
		{"not reported", []string{"nvme"}, true, nil, "reported no storage class nvme for the slice (it reported: hdd, ssd)"},
		{"without a slice", []string{"nvme"}, false, []corev1beta1.StorageType{{StorageClassName: "nvme"}}, ""},
		{"a bad name", []string{"Fast_Disk"}, false, nil, `--storage-classes: "Fast_Disk" is not a storage class name`},
		{"twice", []string{"ssd", "ssd"}, true, nil, "ssd is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := offeredStorageClasses(tc.names, reported, tc.fromSlice)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v (%v), want %v", got, err, tc.want)
			}
		})
	}
	if _, err := offeredStorageClasses([]string{"ssd"}, nil, true); err == nil || !strings.Contains(err.Error(), "(it reported: none)") {
		t.Errorf("a slice with no classes: %v", err)
	}
}
