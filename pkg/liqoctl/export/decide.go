package export

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/wait"
)

// action is what liqoctl export service does once it has read the Service
// and its ServiceExport.
type action int

const (
	// create the ServiceExport.
	create action = iota
	// keep the ServiceExport that exists: the Service is exported already.
	keep
)

// checkNames refuses names the API server would refuse, before any
// request: a Service's name is a DNS-1035 label, a namespace's a DNS-1123
// label.
func checkNames(namespace, name string) error {
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid Service name: %s", name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid namespace name: %s", namespace, strings.Join(errs, "; "))
	}
	return nil
}

// decide says what exporting Service namespace/name comes to, given the
// Service (nil: it does not exist) and its ServiceExport (nil: none).
//
// A missing Service is refused and nothing is created: the controller
// would only report the export Valid=False (NoService), an object for the
// user to clean up, when the likely cause is a typo in the name or the
// namespace. An ExternalName Service is refused for the same reason: it
// has no endpoints to share. Either way an existing ServiceExport is left
// as it is, and the error says how to remove it.
func decide(namespace, name string, svc *corev1.Service, existing *mcsv1beta1.ServiceExport) (action, error) {
	cleanup := ""
	if existing != nil {
		cleanup = fmt.Sprintf(" (its ServiceExport exists: liqoctl unexport service %s -n %s removes it)", name, namespace)
	}
	switch {
	case svc == nil:
		return 0, fmt.Errorf("there is no Service %s in namespace %s: create it first, nothing was exported%s", name, namespace, cleanup)
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return 0, fmt.Errorf("the Service %s/%s is of type ExternalName, which cannot be exported: it has no endpoints "+
			"for the clusterset to share%s", namespace, name, cleanup)
	case existing == nil:
		return create, nil
	case !existing.DeletionTimestamp.IsZero():
		return 0, fmt.Errorf("the ServiceExport of %s/%s is being deleted: run the command again once it is gone", namespace, name)
	}
	return keep, nil
}

// verdict is what the controller manager made of a ServiceExport: its
// Valid condition and, when the clusterset disagrees on the Service, its
// Conflict condition (nil when not True).
type verdict struct {
	Valid    metav1.Condition
	Conflict *metav1.Condition
}

// judge reads the export's verdict from its conditions, or returns an
// error of pkg/wait's "not yet" kind while there is none: the Valid
// condition is missing, is about an older generation of the export, or is
// False. A False one is waited on as well: decide has just seen the
// Service exportable, so False is the controller not having caught up
// yet; it stays the reported state if the wait times out.
func judge(se *mcsv1beta1.ServiceExport) (verdict, error) {
	valid := current(se, mcsv1beta1.ServiceExportConditionValid)
	if valid == nil {
		return verdict{}, wait.NotYet("the ServiceExport has no Valid condition yet (Liqo's controller manager sets it)")
	}
	if valid.Status != metav1.ConditionTrue {
		return verdict{}, wait.NotYet("%s", describe(valid))
	}
	v := verdict{Valid: *valid}
	if c := current(se, mcsv1beta1.ServiceExportConditionConflict); c != nil && c.Status == metav1.ConditionTrue {
		v.Conflict = c
	}
	return v, nil
}

// current is the condition typ of se if it is about se's generation. An
// implementation that does not record the generation (0) is taken at its
// word.
func current(se *mcsv1beta1.ServiceExport, typ mcsv1beta1.ServiceExportConditionType) *metav1.Condition {
	c := meta.FindStatusCondition(se.Status.Conditions, string(typ))
	if c == nil || (c.ObservedGeneration != 0 && c.ObservedGeneration < se.Generation) {
		return nil
	}
	return c
}

// describe renders a condition on one line, as the command prints it.
func describe(c *metav1.Condition) string {
	s := fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason)
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// errCRDsMissing is the error for a cluster without the ServiceExport
// type.
var errCRDsMissing = errors.New("the Multi-Cluster Services API (ServiceExport, multicluster.x-k8s.io/v1beta1) is not installed " +
	"in the cluster: install Liqo (liqoctl install), whose chart brings its CRDs")
