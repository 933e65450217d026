package provision

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Provisioner does the storage work behind the volumes of a provisioner.
type Provisioner interface {
	// Provision makes the volume of o.PVC and returns its PV, without
	// claim reference, class or provisioned-by annotation (the
	// controller sets them). It must be idempotent: it may be called
	// again for the same PVC, until the PV is saved. The State says what
	// an error means.
	Provision(ctx context.Context, o Options) (*corev1.PersistentVolume, State, error)
	// Delete removes what backs pv. An *IgnoredError says pv is not this
	// provisioner's to delete: the PV is left as it is.
	Delete(ctx context.Context, pv *corev1.PersistentVolume) error
}

// Options are what a PVC asks for.
type Options struct {
	// PVName is the name of the PV to make: "pvc-" and the PVC's UID, so
	// that a retry makes the same PV.
	PVName string
	PVC    *corev1.PersistentVolumeClaim
	// StorageClass is the PVC's class.
	StorageClass *storagev1.StorageClass
	// SelectedNodeName is the node the scheduler picked for the PVC's
	// first pod (classes binding on the first consumer); empty for the
	// others.
	SelectedNodeName string
	// Parameters are the class's.
	Parameters map[string]string
}

// State is how far a failed Provision went. Every failure is retried
// with backoff; the states differ in what the controller does besides.
type State string

const (
	// Finished: nothing is under way. With an error and a selected node,
	// the controller removes the PVC's selected-node annotation, so that
	// the scheduler picks a node again (the error may be the node's).
	Finished State = "Finished"
	// InBackground: the volume is being made and the next call will find
	// it further along; the node stays selected.
	InBackground State = "InBackground"
	// NoChange: nothing was done (a transient error); the node stays
	// selected.
	NoChange State = "NoChange"
)

// IgnoredError is a Provisioner's "not mine": the controller records no
// failure and does not retry.
type IgnoredError struct {
	Reason string
}

func (e *IgnoredError) Error() string { return e.Reason }
