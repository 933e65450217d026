package offload

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// pollInterval is short: the command is interactive and each wait is for a
// controller's reaction, usually milliseconds away.
const pollInterval = 100 * time.Millisecond

// Manifest validates the flags and returns the NamespaceOffloading they
// describe, touching no cluster.
func (o *Options) Manifest() (*offv1beta1.NamespaceOffloading, error) {
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("%q is not a valid namespace name: %s", o.Namespace, strings.Join(errs, "; "))
	}
	mapping := offv1beta1.NamespaceMappingStrategy(o.NamespaceMappingStrategy)
	switch mapping {
	case offv1beta1.DefaultNameMappingStrategy, offv1beta1.EnforceSameNameMappingStrategy:
		if o.RemoteNamespaceName != "" {
			return nil, fmt.Errorf("--remote-namespace-name needs --namespace-mapping-strategy SelectedName, not %s", mapping)
		}
	case offv1beta1.SelectedNameMappingStrategy:
		if o.RemoteNamespaceName == "" {
			return nil, fmt.Errorf("--namespace-mapping-strategy SelectedName needs --remote-namespace-name")
		}
		if errs := validation.IsDNS1123Label(o.RemoteNamespaceName); len(errs) > 0 {
			return nil, fmt.Errorf("--remote-namespace-name %q is not a valid namespace name: %s", o.RemoteNamespaceName, strings.Join(errs, "; "))
		}
	default:
		return nil, fmt.Errorf("--namespace-mapping-strategy must be DefaultName, EnforceSameName or SelectedName, got %q", o.NamespaceMappingStrategy)
	}
	pods := offv1beta1.PodOffloadingStrategy(o.PodOffloadingStrategy)
	switch pods {
	case offv1beta1.LocalAndRemotePodOffloadingStrategy, offv1beta1.LocalPodOffloadingStrategy, offv1beta1.RemotePodOffloadingStrategy:
	default:
		return nil, fmt.Errorf("--pod-offloading-strategy must be LocalAndRemote, Local or Remote, got %q", o.PodOffloadingStrategy)
	}
	selector, err := ClusterSelector(o.Selectors)
	if err != nil {
		return nil, err
	}
	return &offv1beta1.NamespaceOffloading{
		TypeMeta:   metav1.TypeMeta{APIVersion: offv1beta1.GroupVersion.String(), Kind: "NamespaceOffloading"},
		ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: o.Namespace},
		Spec: offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: mapping, RemoteNamespaceName: o.RemoteNamespaceName,
			PodOffloadingStrategy: pods, ClusterSelector: selector},
	}, nil
}

// Run validates the flags, then prints the manifest or applies it and
// waits for the outcome.
func (o *Options) Run(ctx context.Context) error {
	want, err := o.Manifest()
	if err != nil {
		return err
	}
	if o.Print != nil && o.Print.Requested() {
		return o.Print.PrintObject(o.out.W, want)
	}
	if err := o.connect(ctx); err != nil {
		return err
	}
	o.out.Step("Enabling the offloading of namespace %s", o.Namespace)
	if err := o.apply(ctx, want); err != nil {
		return err
	}
	o.out.Info("NamespaceOffloading %s/%s in place", o.Namespace, want.Name)
	o.out.Step("Waiting for the twin namespaces")
	got, err := o.waitOutcome(ctx)
	if err != nil {
		return err
	}
	clusters := readyClusters(got)
	o.out.Info("Offloading of namespace %s correctly enabled: twin namespace %s on %s", o.Namespace,
		got.Status.RemoteNamespaceName, strings.Join(clusters, ", "))
	return nil
}

// connect reaches the cluster and checks that Liqo runs there and the
// namespace exists.
func (o *Options) connect(ctx context.Context) error {
	return connect(ctx, &o.Local, o.Timeout, o.Namespace)
}

// apply creates the NamespaceOffloading. An existing one is kept if it asks
// for the same, updated in place if only its pod offloading strategy or
// cluster selector differ, and refused if its naming differs (immutable).
func (o *Options) apply(ctx context.Context, want *offv1beta1.NamespaceOffloading) error {
	c := o.Local.Client
	err := c.Create(ctx, want.DeepCopy())
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("creating the NamespaceOffloading of namespace %s: %w", o.Namespace, err)
		}
		return nil
	}
	var got offv1beta1.NamespaceOffloading
	if err := c.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: want.Name}, &got); err != nil {
		return err
	}
	if !got.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is being unoffloaded; wait until that ends (liqoctl unoffload namespace %s) and offload it again", o.Namespace, o.Namespace)
	}
	if sameSpec(&got.Spec, &want.Spec) {
		o.out.Info("namespace %s was already offloaded with these settings", o.Namespace)
		return nil
	}
	naming := func(s offv1beta1.NamespaceOffloadingSpec) offv1beta1.NamespaceOffloadingSpec {
		return offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: s.NamespaceMappingStrategy, RemoteNamespaceName: s.RemoteNamespaceName}
	}
	if !sameSpec(ptr.To(naming(got.Spec)), ptr.To(naming(want.Spec))) {
		return fmt.Errorf("namespace %s is already offloaded with the namespace mapping strategy %s; "+
			"the mapping cannot change: run liqoctl unoffload namespace %s first", o.Namespace, got.Spec.NamespaceMappingStrategy, o.Namespace)
	}
	// The mapping stays; the pod strategy and the cluster selector change.
	got.Spec.PodOffloadingStrategy, got.Spec.ClusterSelector = want.Spec.PodOffloadingStrategy, want.Spec.ClusterSelector
	if err := c.Update(ctx, &got); err != nil {
		return fmt.Errorf("updating the NamespaceOffloading of namespace %s: %w", o.Namespace, err)
	}
	o.out.Info("namespace %s was already offloaded: its pod offloading strategy and cluster selector are updated "+
		"(new pods follow them; running pods stay where they are)", o.Namespace)
	return nil
}

// sameSpec compares specs as the API server defaults them.
func sameSpec(a, b *offv1beta1.NamespaceOffloadingSpec) bool {
	norm := func(s offv1beta1.NamespaceOffloadingSpec) offv1beta1.NamespaceOffloadingSpec {
		if s.NamespaceMappingStrategy == "" {
			s.NamespaceMappingStrategy = offv1beta1.DefaultNameMappingStrategy
		}
		if s.PodOffloadingStrategy == "" {
			s.PodOffloadingStrategy = offv1beta1.LocalAndRemotePodOffloadingStrategy
		}
		return s
	}
	return equality.Semantic.DeepEqual(norm(*a), norm(*b))
}

// errNotYet marks a state the wait goes on from.
var errNotYet = errors.New("not yet")

// waitOutcome waits until the controller computed the phase of the current
// spec and it is final: Ready, or an error with every cluster's reason.
func (o *Options) waitOutcome(ctx context.Context) (*offv1beta1.NamespaceOffloading, error) {
	var got offv1beta1.NamespaceOffloading
	key := types.NamespacedName{Namespace: o.Namespace, Name: offv1beta1.NamespaceOffloadingName}
	last := fmt.Errorf("%w: the controller manager has not processed it yet", errNotYet)
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		err := o.Local.Client.Get(ctx, key, &got)
		switch {
		case apierrors.IsNotFound(err):
			return false, fmt.Errorf("the NamespaceOffloading of namespace %s was deleted while waiting", o.Namespace)
		case err == nil:
			last = outcome(&got)
			if last != nil && !errors.Is(last, errNotYet) {
				return false, last
			}
			return last == nil, nil
		case ctx.Err() == nil:
			last = err
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("timed out waiting for namespace %s to be offloaded (%v)", o.Namespace, last)
	}
	if err != nil {
		return nil, err
	}
	return &got, nil
}

// outcome is nil once the offloading is Ready, errNotYet while it may
// still be, and the users' reasons when it cannot.
func outcome(nsof *offv1beta1.NamespaceOffloading) error {
	st := &nsof.Status
	if st.ObservedGeneration != nsof.Generation || st.OffloadingPhase == "" {
		return fmt.Errorf("%w: the controller manager has not processed it yet", errNotYet)
	}
	switch st.OffloadingPhase {
	case offv1beta1.ReadyOffloadingPhase:
		return nil
	case offv1beta1.InProgressOffloadingPhase:
		return fmt.Errorf("%w: phase InProgress: %s", errNotYet, readyMessage(nsof))
	case offv1beta1.TerminatingOffloadingPhase:
		return fmt.Errorf("namespace %s is being unoffloaded", nsof.Namespace)
	case offv1beta1.SomeFailedOffloadingPhase:
		// The phase is SomeFailed as soon as one cluster fails: wait for
		// the others, to report them all.
		if undecided(nsof) {
			return fmt.Errorf("%w: phase SomeFailed, some clusters still pending: %s", errNotYet, readyMessage(nsof))
		}
	}
	return fmt.Errorf("offloading of namespace %s failed, phase %s: %s", nsof.Namespace, st.OffloadingPhase, reasons(nsof))
}

// undecided tells whether a selected cluster has not answered yet.
func undecided(nsof *offv1beta1.NamespaceOffloading) bool {
	for _, conds := range nsof.Status.RemoteNamespacesConditions {
		for _, c := range conds {
			if c.Type == offv1beta1.NamespaceReady && c.Status == corev1.ConditionUnknown {
				return true
			}
		}
	}
	return false
}

// reasons lists, per cluster, why it did not get its twin.
func reasons(nsof *offv1beta1.NamespaceOffloading) string {
	var out []string
	conds := nsof.Status.RemoteNamespacesConditions
	for _, cluster := range slices.Sorted(maps.Keys(conds)) {
		for _, c := range conds[cluster] {
			if c.Status == corev1.ConditionFalse && (c.Type == offv1beta1.NamespaceReady || c.Reason != "ClusterNotSelected") {
				out = append(out, fmt.Sprintf("%s: %s (%s)", cluster, c.Reason, c.Message))
			}
		}
	}
	if len(out) == 0 {
		return readyMessage(nsof)
	}
	return strings.Join(out, "; ")
}

func readyMessage(nsof *offv1beta1.NamespaceOffloading) string {
	for _, c := range nsof.Status.Conditions {
		if c.Type == "Ready" {
			return c.Message
		}
	}
	return ""
}

func readyClusters(nsof *offv1beta1.NamespaceOffloading) []string {
	var out []string
	conds := nsof.Status.RemoteNamespacesConditions
	for _, cluster := range slices.Sorted(maps.Keys(conds)) {
		for _, c := range conds[cluster] {
			if c.Type == offv1beta1.NamespaceReady && c.Status == corev1.ConditionTrue {
				out = append(out, cluster)
			}
		}
	}
	return out
}
