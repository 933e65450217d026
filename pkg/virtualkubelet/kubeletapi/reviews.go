package kubeletapi

import (
	"context"
	"fmt"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
)

// The local API server decides who a bearer token is and what a user may
// do, as it does for a kubelet in webhook mode. Answers are not cached:
// logs, exec and port-forward are interactive and rare, and a revoked right
// takes effect at once. (k8s.io/apiserver's delegating authenticator and
// authorizer cache, but bring gRPC, OpenTelemetry exporters and CEL in.)

// tokenReviewer authenticates bearer tokens with TokenReviews.
type tokenReviewer struct{ client kubernetes.Interface }

var _ authenticator.Token = tokenReviewer{}

func (r tokenReviewer) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	review, err := r.client.AuthenticationV1().TokenReviews().Create(ctx,
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("token review: %w", err)
	}
	if !review.Status.Authenticated {
		return nil, false, nil
	}
	u := review.Status.User
	extra := make(map[string][]string, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}}, true, nil
}

// accessReviewer authorizes requests with SubjectAccessReviews.
type accessReviewer struct{ client kubernetes.Interface }

var _ authorizer.Authorizer = accessReviewer{}

func (r accessReviewer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	extra := make(map[string]authzv1.ExtraValue, len(u.GetExtra()))
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	review, err := r.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{
			User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
			ResourceAttributes: &authzv1.ResourceAttributes{
				Verb: a.GetVerb(), Version: a.GetAPIVersion(), Resource: a.GetResource(),
				Subresource: a.GetSubresource(), Name: a.GetName(),
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("subject access review: %w", err)
	}
	if review.Status.Allowed {
		return authorizer.DecisionAllow, review.Status.Reason, nil
	}
	return authorizer.DecisionDeny, review.Status.Reason, nil
}
