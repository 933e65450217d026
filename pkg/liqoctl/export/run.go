package export

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/wait"
)

// progressEvery is how often the wait says it is still waiting: the
// controller usually answers in milliseconds, so a silent wait of seconds
// deserves a word.
const progressEvery = 5 * time.Second

// Manifest is the ServiceExport of the Service, touching no cluster.
func (o *Options) Manifest() (*mcsv1beta1.ServiceExport, error) {
	if err := checkNames(o.Namespace, o.Name); err != nil {
		return nil, err
	}
	return &mcsv1beta1.ServiceExport{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcsv1beta1.SchemeGroupVersion.String(), Kind: "ServiceExport"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
	}, nil
}

// Run prints the ServiceExport (-o), or creates it unless the Service is
// exported already, and waits for the controller manager's verdict.
func (o *Options) Run(ctx context.Context) error {
	want, err := o.Manifest()
	if err != nil {
		return err
	}
	if o.Print != nil && o.Print.Requested() {
		return o.Print.PrintObject(o.out.W, want)
	}
	if err := o.Local.Connect(ctx, min(o.Timeout/3, 10*time.Second)); err != nil {
		return err
	}
	c := o.Local.Client
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.Name}

	// The ServiceExport first: without the CRDs nothing else matters.
	var existing *mcsv1beta1.ServiceExport
	se := &mcsv1beta1.ServiceExport{}
	switch err := c.Get(ctx, key, se); {
	case meta.IsNoMatchError(err):
		return errCRDsMissing
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading the ServiceExport of %s: %w", key, err)
	default:
		existing = se
	}
	var svc *corev1.Service
	got, err := o.Local.Clientset.CoreV1().Services(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading Service %s: %w", key, err)
	default:
		svc = got
	}
	act, err := decide(o.Namespace, o.Name, svc, existing)
	if err != nil {
		return err
	}
	switch act {
	case keep:
		o.out.Info("Service %s is already exported", key)
	case create:
		o.out.Step("Exporting Service %s", key)
		switch err := c.Create(ctx, want); {
		case apierrors.IsAlreadyExists(err):
			// Created meanwhile, by someone else: it is there all the same.
			o.out.Info("Service %s is already exported", key)
		case err != nil:
			return fmt.Errorf("creating the ServiceExport of %s: %w", key, err)
		default:
			o.out.Info("ServiceExport %s created", key)
		}
	}
	return o.report(ctx, key)
}

// report waits for the export's verdict and prints it.
func (o *Options) report(ctx context.Context, key types.NamespacedName) error {
	o.out.Step("Waiting for Liqo's controller manager to validate the export (up to %s)", o.Timeout)
	start, said := time.Now(), time.Duration(0)
	var v verdict
	se := &mcsv1beta1.ServiceExport{}
	err := wait.For(ctx, o.Local.Client, key, se, "the ServiceExport's Valid condition", func(se *mcsv1beta1.ServiceExport) error {
		var err error
		v, err = judge(se)
		if waited := time.Since(start).Truncate(progressEvery); err != nil && waited > said {
			said = waited
			o.out.Step("  still waiting after %s: %v", waited, err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%w; is Liqo's controller manager running (liqoctl info)? The ServiceExport stays in place: "+
			"liqoctl unexport service %s -n %s removes it", err, key.Name, key.Namespace)
	}
	o.out.Info("%s", describe(&v.Valid))
	if v.Conflict != nil {
		o.out.Warn("%s", describe(v.Conflict))
		o.out.Warn("the clusters exporting %s disagree on it: the oldest export's properties win; "+
			"this cluster's endpoints are still part of the import", key)
	}
	return nil
}
