package storage

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Names of the storage fabric, as the reference system's.
const (
	// ProvisionerName is the provisioner of the virtual StorageClass.
	ProvisionerName = "liqo.io/storage"
	// DefaultVirtualClass is the virtual StorageClass's name.
	DefaultVirtualClass = "liqo"
	// DefaultNamespace holds the real PVCs behind local volumes.
	DefaultNamespace = consts.StorageNamespace
	// Labels of a real PVC naming its virtual one.
	VirtualPVCNamespaceLabel = "storage.liqo.io/virtual-pvc-namespace"
	VirtualPVCNameLabel      = "storage.liqo.io/virtual-pvc-name"
)

// Options of the storage fabric.
type Options struct {
	Enabled bool
	// VirtualClass is the virtual StorageClass's name.
	VirtualClass string
	// RealClass backs local volumes; empty: the cluster's default class.
	RealClass string
	// Namespace holds the real PVCs.
	Namespace string
}

// DefaultOptions are the flags' defaults: enabled, the reference's names.
func DefaultOptions() Options {
	return Options{Enabled: true, VirtualClass: DefaultVirtualClass, Namespace: DefaultNamespace}
}

// AddFlags binds o to the controller manager's flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "enable-storage", o.Enabled, "run the provisioner of the virtual StorageClass (PVCs of offloaded pods bound where their first pod runs)")
	fs.StringVar(&o.VirtualClass, "virtual-storage-class-name", o.VirtualClass, "name of the virtual StorageClass")
	fs.StringVar(&o.RealClass, "real-storage-class-name", o.RealClass, "StorageClass of the real PVCs behind volumes on local nodes (default: the cluster's default class)")
	fs.StringVar(&o.Namespace, "storage-namespace", o.Namespace, "namespace of the real PVCs behind volumes on local nodes")
}

// Validate reports the first bad option with its flag.
func (o Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	for flag, v := range map[string]string{"--virtual-storage-class-name": o.VirtualClass, "--storage-namespace": o.Namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return fmt.Errorf("%s %q: %s", flag, v, errs[0])
		}
	}
	if o.RealClass != "" && o.RealClass == o.VirtualClass {
		return fmt.Errorf("--real-storage-class-name cannot be the virtual class %q", o.VirtualClass)
	}
	return nil
}
