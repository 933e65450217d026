package budget

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
)

// ObjectBudget bounds what one consumer may keep on this provider of the
// objects it writes in bulk: the ConfigMaps, Secrets, Services, Ingresses,
// PersistentVolumeClaims and ShadowEndpointSlices in its twin namespaces
// and its ResourceSlices, NamespaceMaps and ExportRecords in its tenant
// namespace, all kinds together, by number and by size; its ShadowPods by size (their
// number is its Quota's). Each twin's ResourceQuota counts
// objects of one namespace, and no ResourceQuota counts bytes: without
// this, a consumer with a hundred twins could store a hundred thousand
// Secrets of a megabyte each, filling the provider's etcd (and the memory
// of everything that watches them).
type ObjectBudget struct {
	// MaxBytes bounds the sum of the objects' sizes, as JSON.
	MaxBytes resource.QuantityValue
	// MaxCount bounds their number.
	MaxCount int64
}

// Defaults of ObjectBudget: room for the ConfigMaps, Secrets and Services
// of a few hundred ordinary workloads, and a small part of etcd's default
// 2 GiB per consumer.
const (
	DefaultMaxTenantObjects = 10000
	defaultMaxTenantBytes   = "128Mi"
)

// The chart values and flags of the budget, named in refusals.
const (
	tenantBytesRule = "offloading.tenantObjects.maxBytes (--max-tenant-object-bytes)"
	tenantCountRule = "offloading.tenantObjects.maxCount (--max-tenant-objects)"
)

// The amounts an object's usage has in the budget's ledger.
const (
	objectCount corev1.ResourceName = "objects"
	objectBytes corev1.ResourceName = "bytes"
)

// DefaultObjectBudget is the budget when no flag says otherwise.
func DefaultObjectBudget() ObjectBudget {
	return ObjectBudget{MaxBytes: resource.QuantityValue{Quantity: resource.MustParse(defaultMaxTenantBytes)}, MaxCount: DefaultMaxTenantObjects}
}

// AddFlags adds the budget's flags to fs.
func (b *ObjectBudget) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&b.MaxBytes, "max-tenant-object-bytes",
		"how many bytes (as JSON) of ConfigMaps, Secrets, Services, Ingresses, PersistentVolumeClaims, ShadowEndpointSlices and ShadowPods in "+
			"its twin namespaces, and of ResourceSlices, NamespaceMaps and ExportRecords in its tenant namespace, one consumer may keep on this cluster")
	fs.Int64Var(&b.MaxCount, "max-tenant-objects", b.MaxCount,
		"how many of those objects, all kinds together but ShadowPods (which its Quota counts), one consumer may keep on this cluster")
}

// Validate reports a bad setting with its flag.
func (b ObjectBudget) Validate() error {
	if b.MaxBytes.Sign() <= 0 {
		return fmt.Errorf("--max-tenant-object-bytes must be positive, got %s", b.MaxBytes.String())
	}
	if b.MaxCount <= 0 {
		return fmt.Errorf("--max-tenant-objects must be positive, got %d", b.MaxCount)
	}
	return nil
}

// limit is the budget as the ledger checks it: every amount bounded, on
// what an object adds.
func (b ObjectBudget) Limit() quota.Limit {
	return quota.Limit{Open: true, Enforcement: offv1beta1.SoftLimitsEnforcement, Resources: corev1.ResourceList{
		objectCount: *resource.NewQuantity(b.MaxCount, resource.DecimalSI),
		objectBytes: b.MaxBytes.Quantity.DeepCopy(),
	}}
}

// Footprint is what one object of size bytes takes from the budget: its
// size, and one object if counted.
func Footprint(size int64, counted bool) quota.Usage {
	u := quota.Usage{Requests: corev1.ResourceList{objectBytes: *resource.NewQuantity(size, resource.BinarySI)}}
	if counted {
		u.Requests[objectCount] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return u
}

// budgetRefusal words a refusal of the ledger for consumer, naming the
// rule the consumer's provider administrator can change.
func budgetRefusal(consumer string, err error) (string, bool) {
	var exceeded *quota.ExceededError
	if !errors.As(err, &exceeded) {
		return "", false
	}
	return fmt.Sprintf("%v: consumer %s keeps as much on this provider as it may (its ConfigMaps, Secrets, Services, "+
		"Ingresses, PersistentVolumeClaims, ShadowEndpointSlices and ShadowPods in its twin namespaces, and its ResourceSlices, "+
		"NamespaceMaps and ExportRecords, count together); delete some first [rule: %s]", err, consumer, Rule(exceeded)), true
}

// Rule is the setting of the budget an quota.ExceededError is about.
func Rule(e *quota.ExceededError) string {
	if e.Resource == string(objectBytes) {
		return tenantBytesRule
	}
	return tenantCountRule
}
