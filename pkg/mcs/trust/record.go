package trust

import (
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
	"github.com/liqo-go/liqo/pkg/mcs/record"
)

// Record checks the record r read from peer sender (whose networks the
// receiver maps with peer, see Endpoints) and returns the export it
// stands for and its endpoints where the receiver reaches them. A record
// naming another source cluster than the one it came from (a consumer
// claiming the provider's exports, or a third cluster's) is refused, as
// are a record whose name is not the one its source would give it and
// any fault Export or Endpoints finds.
func Record(sender string, peer ipam.Mapping, r *offv1beta1.ExportRecord) (merge.Export, []discoveryv1.Endpoint, error) {
	var errs []error
	if src := r.Labels[mcsv1beta1.LabelSourceCluster]; src != sender {
		errs = append(errs, fmt.Errorf("record %s of cluster %s claims source cluster %q: a cluster publishes only its own exports", r.Name, sender, src))
	}
	for _, msg := range validation.IsDNS1123Label(r.Spec.Namespace) {
		errs = append(errs, fmt.Errorf("record %s of cluster %s: namespace %q: %s", r.Name, sender, r.Spec.Namespace, msg))
	}
	for _, msg := range validation.IsDNS1035Label(r.Spec.Service) {
		errs = append(errs, fmt.Errorf("record %s of cluster %s: Service name %q: %s", r.Name, sender, r.Spec.Service, msg))
	}
	if want := record.Name(sender, r.Spec.Namespace, r.Spec.Service); r.Name != want {
		errs = append(errs, fmt.Errorf("record %s of cluster %s for Service %s/%s should be named %s", r.Name, sender, r.Spec.Namespace, r.Spec.Service, want))
	}
	if err := errors.Join(errs...); err != nil {
		return merge.Export{}, nil, err
	}
	e := record.Export(r)
	if err := Export(sender, e); err != nil {
		return merge.Export{}, nil, err
	}
	eps, err := Endpoints(sender, peer, r.Spec.Endpoints.Endpoints)
	if err != nil {
		return merge.Export{}, nil, err
	}
	return e, eps, nil
}
