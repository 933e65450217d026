package tenancy

import (
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

func TestRequester(t *testing.T) {
	tests := []struct {
		name     string
		user     authnv1.UserInfo
		id       string
		consumer bool
		err      string
	}{
		{"a consumer", authnv1.UserInfo{Username: "liqo-consumer-rome", Groups: []string{consts.ConsumerGroup, "system:authenticated"}}, "rome", true, ""},
		{"an administrator", authnv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}}, "", false, ""},
		{"a controller", authnv1.UserInfo{Username: "system:serviceaccount:kube-system:generic-garbage-collector"}, "", false, ""},
		{"the consumer group without the name", authnv1.UserInfo{Username: "mallory", Groups: []string{consts.ConsumerGroup}}, "", false, "not named"},
		{"the name without the group", authnv1.UserInfo{Username: "liqo-consumer-rome"}, "", false, "not in group"},
		{"a consumer name that is no cluster ID", authnv1.UserInfo{Username: "liqo-consumer-Bad_Name", Groups: []string{consts.ConsumerGroup}}, "", false, "no valid consumer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, consumer, err := Requester(tt.user)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || id != tt.id || consumer != tt.consumer {
				t.Errorf("requester = %q, %v, %v; want %q, %v", id, consumer, err, tt.id, tt.consumer)
			}
		})
	}
}

func TestCheckOrigin(t *testing.T) {
	tests := []struct {
		name, twinOf, requester string
		consumer                bool
		origin, err             string
	}{
		{"a consumer in its twin namespace", "rome", "rome", true, "rome", ""},
		{"a consumer in another consumer's twin", "naples", "rome", true, "rome", "belongs to consumer naples"},
		{"a consumer lying about its origin", "rome", "rome", true, "naples", `must be "rome"`},
		{"a consumer forgetting its origin", "rome", "rome", true, "", `must be "rome"`},
		{"an administrator with the right origin", "rome", "", false, "rome", ""},
		{"an administrator with a wrong origin", "rome", "", false, "naples", `must be "rome"`},
		{"no twin namespace", "", "", false, "rome", "not a twin namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckOrigin("ns", tt.twinOf, tt.requester, tt.consumer, tt.origin)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("CheckOrigin = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestConsumerOf(t *testing.T) {
	twin := map[string]string{consts.TwinNamespaceLabel: "true", consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: "rome"}
	if got := ConsumerOf(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Labels: twin}}); got != "rome" {
		t.Errorf("consumer of a twin = %q, want rome", got)
	}
	// A namespace a user labelled by hand, without our managed-by label.
	if got := ConsumerOf(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: "rome"}}}); got != "" {
		t.Errorf("consumer of a hand-labelled namespace = %q, want none", got)
	}
}
