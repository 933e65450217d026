package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ReasonPublicKeyChanged is the Ready condition's reason of a Tenant whose
// identity key is not the one its consumer ID was first authenticated with.
const ReasonPublicKeyChanged = "PublicKeyChanged"

// errKeyChanged is what checkPin returns for a key other than the pinned
// one; its text is the Tenant's condition message.
type errKeyChanged struct{ consumer, namespace string }

func (e errKeyChanged) Error() string {
	return fmt.Sprintf("spec.publicKey is not the identity key consumer %s was first authenticated with (pinned on namespace %s): "+
		"a cluster claiming an existing consumer's ID is refused. If that consumer changed its identity, the provider's administrator "+
		"accepts the new key by removing the pin: kubectl annotate namespace %s %s-",
		e.consumer, e.namespace, e.namespace, consts.ConsumerPublicKeyAnnotation)
}

// checkPin pins, on the tenant namespace, the identity key the consumer's
// handshake was verified with, and refuses any other key afterwards.
//
// Why: the signature proves only that whoever wrote the Tenant holds the
// key in it, not that it is the key this consumer ID peered with. Anyone
// able to write the Tenant (a leaked peering-user token, a second cluster
// given the same ID) could otherwise sign the nonce with a key of its own
// and be issued the consumer's certificate. The pin lives on the
// namespace, which neither the consumer nor its peering users may change,
// so deleting and recreating the Tenant does not reset it; it goes with
// the namespace.
func (r *TenantReconciler) checkPin(ctx context.Context, t *authv1beta1.Tenant) error {
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: t.Namespace}, &ns); err != nil {
		return fmt.Errorf("reading the tenant namespace %s: %w", t.Namespace, err)
	}
	pinned, ok := ns.Annotations[consts.ConsumerPublicKeyAnnotation]
	if !ok {
		patch := client.MergeFromWithOptions(ns.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[consts.ConsumerPublicKeyAnnotation] = base64.StdEncoding.EncodeToString(t.Spec.PublicKey)
		// The merge patch carries the namespace's resourceVersion: of two
		// Tenants pinning at once, one fails and is reconciled again.
		if err := r.Client.Patch(ctx, &ns, patch); err != nil {
			return fmt.Errorf("pinning the consumer's key on namespace %s: %w", t.Namespace, err)
		}
		return nil
	}
	key, err := base64.StdEncoding.DecodeString(pinned)
	if err != nil || !bytes.Equal(key, t.Spec.PublicKey) {
		return errKeyChanged{consumer: string(t.Spec.ClusterID), namespace: t.Namespace}
	}
	return nil
}
