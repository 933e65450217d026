// Package apis gathers the API groups of the project into one scheme.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// NewScheme returns a scheme holding the Kubernetes built-in types, ours
// and the Multi-Cluster Services API's.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, corev1beta1.AddToScheme, authv1beta1.AddToScheme, offv1beta1.AddToScheme,
		netv1beta1.AddToScheme, ipamv1alpha1.AddToScheme,
		// The Multi-Cluster Services API, whose types the released module
		// sigs.k8s.io/mcs-api defines.
		mcsv1beta1.Install,
	} {
		if err := add(s); err != nil {
			panic(err) // only on programming errors: conflicting type registrations
		}
	}
	return s
}
