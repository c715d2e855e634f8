package fix

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func cm(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}

func change(name string) checks.Change {
	return checks.Change{
		Object:    checks.ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: name},
		Resource:  cmGVR,
		Fields:    []checks.FieldChange{{Field: "metadata.labels[a]", Old: "", New: "b"}, {Field: "metadata.annotations[x]", Old: "old", New: "new"}},
		PatchType: types.MergePatchType,
		Patch:     []byte(`{"metadata":{"labels":{"a":"b"}}}`),
	}
}

func TestPlanOnlyFailedFixable(t *testing.T) {
	planned := 0
	fixable := checks.Check{Meta: checks.Meta{ID: "f", Fixable: true}, Plan: func(context.Context, *checks.Env) ([]checks.Change, error) {
		planned++
		return []checks.Change{change("one")}, nil
	}}
	byID := func(id string) (checks.Check, bool) { return fixable, id == "f" }
	outs := []checks.Outcome{
		{Meta: fixable.Meta, Result: checks.Result{Status: checks.StatusPass}},
		{Meta: fixable.Meta, Result: checks.Result{Status: checks.StatusSkip}},
		{Meta: checks.Meta{ID: "other"}, Result: checks.Result{Status: checks.StatusFail}},
	}
	if p := Plan(context.Background(), &checks.Env{}, byID, outs); len(p) != 0 || planned != 0 {
		t.Fatalf("planned %d for passing/skipped/unfixable checks: %+v", planned, p)
	}
	outs[0].Status = checks.StatusFail
	p := Plan(context.Background(), &checks.Env{}, byID, outs)
	if len(p) != 1 || CountChanges(p) != 1 || planned != 1 {
		t.Fatalf("plan = %+v", p)
	}
	var b strings.Builder
	if err := WritePlan(&b, p, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"will patch 1 object(s)", "ConfigMap/ns/one", "metadata.labels[a]: <none> → b", "metadata.annotations[x]: old → new"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, b.String())
		}
	}
}

// TestApplyPartialFailure: one forbidden patch is reported on its own; the
// others are still sent, with the field manager and (for dry runs) dryRun=All.
func TestApplyPartialFailure(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), cm("one"), cm("two"), cm("three"))
		var seen []string
		dyn.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
			pa := a.(k8stesting.PatchActionImpl)
			seen = append(seen, pa.GetName())
			if pa.PatchOptions.FieldManager != checks.FieldManager || (len(pa.PatchOptions.DryRun) == 1 && pa.PatchOptions.DryRun[0] == metav1.DryRunAll) != dryRun {
				t.Errorf("dryRun=%v: patch options %+v", dryRun, pa.PatchOptions)
			}
			if pa.GetName() == "two" {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "two", errors.New("user cannot patch"))
			}
			return false, nil, nil
		})
		plans := []CheckPlan{{CheckID: "f", Changes: []checks.Change{change("one"), change("two"), change("three")}}, {CheckID: "g", Err: errors.New("refused")}}
		res := Apply(context.Background(), dyn, plans, dryRun)
		if len(res) != 3 || len(seen) != 3 || !Failed(res) {
			t.Fatalf("dryRun=%v: results %+v, patched %v", dryRun, res, seen)
		}
		if res[0].Err != nil || res[2].Err != nil || res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "forbidden") {
			t.Fatalf("dryRun=%v: results %+v", dryRun, res)
		}
		var b strings.Builder
		if err := WriteResults(&b, res, dryRun); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "✖ ConfigMap/ns/two: forbidden") || !strings.Contains(b.String(), "2 ") || !strings.Contains(b.String(), "1 failed") {
			t.Errorf("results:\n%s", b.String())
		}
	}
}

func TestExplainConflict(t *testing.T) {
	err := explain(apierrors.NewConflict(schema.GroupResource{Resource: "customresourcedefinitions"}, "x", errors.New("the object has been modified")))
	if !strings.Contains(err.Error(), "conflict") || !strings.Contains(err.Error(), "run --fix again") {
		t.Errorf("explain = %v", err)
	}
}

func TestRefusedChangesAreNeverSent(t *testing.T) {
	dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme(), cm("one"), cm("owned"))
	var seen []string
	dyn.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		seen = append(seen, a.(k8stesting.PatchActionImpl).GetName())
		return false, nil, nil
	})
	refused := checks.Change{Object: checks.ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: "owned"},
		Refused: "owned by deployed release cf-gitops-runtime in namespace codefresh: uninstall it or install as that release"}
	plans := []CheckPlan{{CheckID: "helm-ownership", Changes: []checks.Change{change("one"), refused}}}
	if CountChanges(plans) != 1 || !Refused(plans) {
		t.Fatalf("count %d refused %v", CountChanges(plans), Refused(plans))
	}
	if Refused([]CheckPlan{{CheckID: "x", Changes: []checks.Change{change("one")}}}) {
		t.Error("a plan without refusals is refused")
	}
	var b strings.Builder
	if err := WritePlan(&b, plans, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ConfigMap/ns/owned: refused, not changed: owned by deployed release cf-gitops-runtime") || !strings.Contains(b.String(), "will patch 1 object") {
		t.Errorf("plan:\n%s", b.String())
	}
	res := Apply(context.Background(), dyn, plans, false)
	if len(res) != 1 || len(seen) != 1 || seen[0] != "one" {
		t.Errorf("results %+v, patched %v", res, seen)
	}
}
