package checks

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func errorsForbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("RBAC: access denied"))
}

func deployment(ns, name string, annotations map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}}
}

// An upgrade's warning or failure with no source of its own points at the
// line where the target version is written; a pass, and a result anchored
// already, are left as they are.
func TestVersionAnchored(t *testing.T) {
	at := Source{File: "resources/rt1/chart/Chart.yaml", Line: 6, Column: 3}
	env := &Env{Inputs: Inputs{ChartVersionSource: at}}
	own := &Source{File: "values.yaml", Line: 2}
	for _, tt := range []struct {
		name string
		r    Result
		want *Source
	}{
		{"fail", Fail("deletes"), &at},
		{"warn", Warn("changes"), &at},
		{"pass", Pass("fine"), nil},
		{"anchored already", Warn("ignored").WithSource(own), own},
	} {
		got, err := versionAnchored(func(context.Context, *Env) (Result, error) { return tt.r, nil })(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if (got.Source == nil) != (tt.want == nil) || got.Source != nil && *got.Source != *tt.want {
			t.Errorf("%s: source %+v, want %+v", tt.name, got.Source, tt.want)
		}
	}
}
