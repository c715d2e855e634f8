package apply

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API server's answers are refusals; a request that got none (the
// transport's errors, the server's timeout or throttling) is asked again,
// and never taken for a refusal.
func TestTransient(t *testing.T) {
	crd := schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}
	clientTimeout := &url.Error{Op: "Patch", URL: "https://127.0.0.1:6443/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x", Err: errors.New("net/http: request canceled (Client.Timeout exceeded while awaiting headers)")}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"the client's timeout", clientTimeout, true},
		{"the context's deadline", context.DeadlineExceeded, true},
		{"the API server's timeout", apierrors.NewServerTimeout(crd, "patch", 1), true},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), true},
		{"invalid: a refusal", apierrors.NewInvalid(schema.GroupKind{Group: crd.Group, Kind: "CustomResourceDefinition"}, "x", nil), false},
		{"forbidden: a refusal", apierrors.NewForbidden(crd, "x", errors.New("denied")), false},
		{"none", nil, false},
	} {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("%s: transient %v, want %v", tt.name, got, tt.want)
		}
	}
	// Helm's kube client joins errors into text: the same words decide.
	if !transientText(fmt.Errorf("cannot patch %q with kind CustomResourceDefinition: %w", "x", clientTimeout)) {
		t.Error("a client timeout in Helm's text not taken for no answer")
	}
	if transientText(errors.New(`cannot patch "x" with kind Deployment: admission webhook "deny.example.com" denied the request`)) {
		t.Error("a webhook's denial taken for no answer")
	}
}

// askAgain asks again while there is no answer, and stops at the first
// answer, a refusal included.
func TestAskAgain(t *testing.T) {
	calls := 0
	err, lost := askAgain(transient, func() error {
		calls++
		if calls < 3 {
			return context.DeadlineExceeded
		}
		return apierrors.NewBadRequest("refused")
	})
	if calls != 3 || lost || !apierrors.IsBadRequest(err) {
		t.Errorf("%d calls, lost %v, err %v: want the refusal on the third", calls, lost, err)
	}
	calls = 0
	err, lost = askAgain(transient, func() error { calls++; return context.DeadlineExceeded })
	if !lost || calls < 2 {
		t.Errorf("%d calls, lost %v (%v): want asked again, then no answer", calls, lost, err)
	}
	na := &NoAnswerError{Kind: "CustomResourceDefinition", Name: "applicationsets.argoproj.io", Err: err}
	if !strings.Contains(na.Error(), "no answer from the API server to the dry run of CustomResourceDefinition applicationsets.argoproj.io") || !errors.Is(na, context.DeadlineExceeded) {
		t.Errorf("%v", na)
	}
}
