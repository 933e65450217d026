package peer

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
)

func TestDecodeNonce(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(make([]byte, consts.NonceSize))
	cases := []struct{ in, wantErr string }{
		{good, ""},
		{"not base64!", "--nonce is not base64"},
		{"YWJj", "--nonce has 3 bytes"},
		{good[:len(good)-4], "--nonce has"},
	}
	for _, c := range cases {
		_, err := decodeNonce(c.in)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("decodeNonce(%q) = %v, want %q", c.in, err, c.wantErr)
		}
	}
}

// The manifests the manual peering hands across are what the other side
// applies as is: in the tenant namespace, with no status, and the Tenant
// without a condition (which would undo the provider's cordon).
func TestManifests(t *testing.T) {
	signed := &corev1.Secret{Data: map[string][]byte{consts.PublicKeyKey: []byte("pk"), consts.CSRKey: []byte("csr"), consts.SignatureKey: []byte("sig")}}
	tenant := peering.ForgeTenant("rome", signed, "")
	tenant.Status.TenantNamespace = "set by the provider"
	var b strings.Builder
	print := output.NewObjectFlags("yaml")
	if err := print.PrintObject(&b, tenant); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"status", "creationTimestamp", "tenantCondition"} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("the Tenant manifest has %s:\n%s", absent, b.String())
		}
	}
	var back authv1beta1.Tenant
	if err := yaml.UnmarshalStrict([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != "Tenant" || back.Namespace != consts.TenantNamespace("rome") || string(back.Spec.Signature) != "sig" {
		t.Errorf("the Tenant manifest reads back as %+v", back)
	}

	tenant.Status.AuthParams = &authv1beta1.AuthParams{APIServer: "https://milan:6443", CA: []byte("ca"), SignedCRT: []byte("crt")}
	id := peering.ForgeIdentity(tenant, "milan")
	if id.Namespace != consts.TenantNamespace("milan") || *id.Spec.Namespace != consts.TenantNamespace("rome") ||
		id.Spec.AuthParams.APIServer != "https://milan:6443" || id.Name != consts.IdentityName("milan") {
		t.Errorf("Identity %+v", id)
	}
	if id.Spec.AuthParams.ProxyURL != nil {
		t.Errorf("an Identity with a proxy no one asked for: %q", *id.Spec.AuthParams.ProxyURL)
	}
	// The proxy is the one the consumer asked for in its Tenant, whatever
	// the provider's status says.
	proxied := peering.ForgeTenant("rome", signed, "http://proxy.rome:3128")
	proxied.Status.AuthParams = &authv1beta1.AuthParams{APIServer: "https://milan:6443", ProxyURL: ptr.To("http://elsewhere:1")}
	if p := peering.ForgeIdentity(proxied, "milan").Spec.AuthParams.ProxyURL; p == nil || *p != "http://proxy.rome:3128" {
		t.Errorf("the Identity of a Tenant asking for a proxy has proxy %v, want http://proxy.rome:3128", p)
	}
	id.Spec.AuthParams.APIServer = "changed"
	if tenant.Status.AuthParams.APIServer != "https://milan:6443" {
		t.Error("ForgeIdentity shares the Tenant's parameters")
	}
	b.Reset()
	if err := print.Set("json"); err != nil {
		t.Fatal(err)
	}
	if err := print.PrintObject(&b, id); err != nil || !strings.HasPrefix(b.String(), "{") {
		t.Errorf("json manifest: %v\n%s", err, b.String())
	}
}

func TestForgeResourceSlice(t *testing.T) {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	for _, vn := range []bool{true, false} {
		s := peering.ForgeResourceSlice("rome", "milan", "pool", req, vn)
		want := map[bool]string{true: "true", false: "false"}[vn]
		if s.Annotations[consts.CreateVirtualNodeAnnotation] != want || s.Namespace != consts.TenantNamespace("milan") ||
			string(*s.Spec.ConsumerClusterID) != "rome" || string(*s.Spec.ProviderClusterID) != "milan" || s.Name != "pool" {
			t.Errorf("createVirtualNode %v: %+v", vn, s.ObjectMeta)
		}
	}
}
