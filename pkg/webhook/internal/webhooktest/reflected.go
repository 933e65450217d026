package webhooktest

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ReflectedService is a ClusterIP Service as the reflection sends it.
func ReflectedService(name, namespace, origin string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: origin}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
}

// RemotePVC is a PVC as the storage fabric's provisioner sends it.
func RemotePVC(name, namespace, origin string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: origin}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

// ReflectedIngress routes hosts to Service web, as the reflection sends an
// Ingress, with the class the provider's API server fills in when nginx is
// its default (mainOptions allows it; TestIngressClasses sends one without).
func ReflectedIngress(name, namespace, origin string, hosts ...string) *networkingv1.Ingress {
	pt := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: origin}},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx")}}
	for _, h := range hosts {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}})
	}
	return ing
}

// ReflectedSlice is a ShadowEndpointSlice as the reflection sends one of
// Service web's slices.
func ReflectedSlice(name, namespace, origin string) *offv1beta1.ShadowEndpointSlice {
	return &offv1beta1.ShadowEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: "web", consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: origin}},
		Spec: offv1beta1.ShadowEndpointSliceSpec{Template: offv1beta1.EndpointSliceTemplate{AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.70.0.5"}}},
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}}}},
	}
}

// ReflectedConfigMap is a ConfigMap as the reflection sends it.
func ReflectedConfigMap(name, namespace, origin string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: origin}},
		Data: map[string]string{"mode": "production"}}
}
