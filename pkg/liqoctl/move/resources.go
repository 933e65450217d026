package move

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quantityValue is a flag holding a quantity (1000m, 512Mi) in a
// ResourceList: set only when given, so that an absent flag leaves the
// movers without that request or limit.
type quantityValue struct {
	list *corev1.ResourceList
	name corev1.ResourceName
}

func (v quantityValue) String() string {
	if q, ok := (*v.list)[v.name]; ok {
		return q.String()
	}
	return ""
}

func (v quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if q.Sign() <= 0 {
		return errNotPositive
	}
	if *v.list == nil {
		*v.list = corev1.ResourceList{}
	}
	(*v.list)[v.name] = q
	return nil
}

func (v quantityValue) Type() string { return "quantity" }

var errNotPositive = errors.New("must be a positive quantity")

// checkResources refuses a request above its limit, which the API server
// would refuse only once the first mover is created.
func checkResources(r corev1.ResourceRequirements) error {
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			flag := map[corev1.ResourceName]string{corev1.ResourceCPU: "cpu", corev1.ResourceMemory: "ram"}[name]
			return fmt.Errorf("--containers-%s-requests %s is above --containers-%s-limits %s", flag, req.String(), flag, lim.String())
		}
	}
	return nil
}

// bindResources binds the reference's flags of the movers' container
// requests and limits into r.
func bindResources(fs *pflag.FlagSet, r *corev1.ResourceRequirements) {
	for _, f := range []struct {
		flag string
		list *corev1.ResourceList
		name corev1.ResourceName
		what string
	}{
		{"containers-cpu-requests", &r.Requests, corev1.ResourceCPU, "CPU request of the mover containers, e.g. 250m"},
		{"containers-cpu-limits", &r.Limits, corev1.ResourceCPU, "CPU limit of the mover containers, e.g. 1000m"},
		{"containers-ram-requests", &r.Requests, corev1.ResourceMemory, "memory request of the mover containers, e.g. 128Mi"},
		{"containers-ram-limits", &r.Limits, corev1.ResourceMemory, "memory limit of the mover containers, e.g. 512Mi"},
	} {
		fs.Var(quantityValue{f.list, f.name}, f.flag, f.what+" (default: none)")
	}
}
