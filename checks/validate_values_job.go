package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/redact"
)

// LogTailLines is how many lines of a failed validation pod's log are shown.
const LogTailLines = 50

// ValidateValuesJob passes when neither hook Job validate-values nor
// validate-usage has failed (condition Failed, e.g. BackoffLimitExceeded).
// On failure it shows the last LogTailLines lines of the Job's pod log, as
// https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Validation failures" asks the user to read
// by hand (`kubectl logs jobs/validate-values -n ${NAMESPACE}`); when the log
// cannot be read (pod gone, kubelet unreachable) it says so and prints that
// command. Values that look like secrets are masked in the shown log.
func ValidateValuesJob() Check {
	return Check{
		Meta: Meta{
			ID:       "validate-values-job",
			Impact:   ImpactInstallFails,
			Category: CategoryRuntime,
			Modes:    ModePost,
			Title:    "No failed validate-values or validate-usage Job",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runValidateValuesJob,
	}
}

func runValidateValuesJob(ctx context.Context, env *Env) (Result, error) {
	ns := env.Inputs.Namespace
	var failed []cluster.Job
	var present []string
	var refusedJobs []Result
	for _, name := range plan.ValidationJobs() {
		job, found, err := env.Cluster.Job(ns, name)
		if err != nil {
			return Result{}, err
		}
		if !found {
			continue
		}
		if job.Failed {
			failed = append(failed, job)
			continue
		}
		state := "succeeded"
		if !job.Complete {
			state = "running"
			if r, ok, err := refusedJobPod(env, job); err != nil {
				return Result{}, err
			} else if ok {
				refusedJobs = append(refusedJobs, r)
				continue
			}
		}
		present = append(present, fmt.Sprintf("%s %s", name, state))
	}
	if len(refusedJobs) > 0 && len(failed) == 0 {
		r := refusedJobs[0]
		for _, x := range refusedJobs[1:] {
			r.Message += "\n" + x.Message
			r.Objects = append(r.Objects, x.Objects...)
		}
		return r, nil
	}
	if len(failed) == 0 {
		if len(present) == 0 {
			return Pass("no validate-values or validate-usage Job in namespace %s (a failed one is kept 300 s after it fails)", ns), nil
		}
		return Pass("no failed validation Job in namespace %s (%s)", ns, strings.Join(present, ", ")), nil
	}
	var msgs []string
	var refs []ObjectRef
	logCmds := make([]string, 0, len(failed))
	for _, job := range failed {
		m, podRef, err := describeFailedJob(ctx, env, job)
		if err != nil {
			return Result{}, err
		}
		msgs = append(msgs, m)
		refs = append(refs, ObjectRef{Kind: "Job", Namespace: ns, Name: job.Name})
		if podRef != nil {
			refs = append(refs, *podRef)
		}
		logCmds = append(logCmds, fmt.Sprintf("kubectl logs jobs/%s -n %s --tail=%d", job.Name, ns, LogTailLines))
	}
	hint := fmt.Sprintf("fix what the log names in your values, then run helm upgrade --install again; read the full log with: %s (the failed Job is deleted 300 s after it fails). To skip the check as a last resort: --set installer.skipValidation=true (validate-values) or installer.skipUsageValidation=true (validate-usage)",
		strings.Join(logCmds, " ; "))
	return Fail("%s", strings.Join(msgs, "\n")).WithHint(hint).WithObjects(refs...), nil
}

// describeFailedJob renders one failed Job with its pod's log tail, or says
// why the log could not be read.
func describeFailedJob(ctx context.Context, env *Env, job cluster.Job) (string, *ObjectRef, error) {
	why := job.Reason
	if job.Message != "" {
		why += ": " + job.Message
	}
	head := fmt.Sprintf("Job %s failed (%s)", job.Name, why)
	cmd := fmt.Sprintf("kubectl logs jobs/%s -n %s --tail=%d", job.Name, job.Namespace, LogTailLines)
	pods, err := env.Cluster.Pods(job.Namespace)
	if err != nil {
		return "", nil, err
	}
	pod, ok := jobPod(pods, job)
	if !ok {
		return fmt.Sprintf("%s; its pod is gone, so its log cannot be read here (run: %s while the Job exists)", head, cmd), nil, nil
	}
	ref := &ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}
	if pod.Node == "" {
		return fmt.Sprintf("%s; its pod %s was never scheduled to a node, so it has no log (run: %s)", head, pod.Name, cmd), ref, nil
	}
	container := ""
	if len(job.Containers) > 0 {
		container = job.Containers[0]
	}
	lines, err := env.Cluster.PodLogTail(ctx, pod.Namespace, pod.Name, container, LogTailLines)
	if err != nil {
		return fmt.Sprintf("%s; the log of pod %s could not be read (%s); run: %s", head, pod.Name, firstLine(rootCause(err)), cmd), ref, nil
	}
	if len(lines) == 0 {
		return fmt.Sprintf("%s; pod %s returned an empty log (run: %s)", head, pod.Name, cmd), ref, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s; last %s of pod %s:", head, plural(len(lines), "line"), pod.Name)
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(RedactSecrets(l))
	}
	return b.String(), ref, nil
}

// jobPod returns the newest pod of job (by the controller-uid or job-name
// labels the Job controller sets).
func jobPod(pods []cluster.Pod, job cluster.Job) (cluster.Pod, bool) {
	var best cluster.Pod
	found := false
	for _, p := range pods {
		l := p.Labels
		mine := (job.UID != "" && (l["batch.kubernetes.io/controller-uid"] == string(job.UID) || l["controller-uid"] == string(job.UID))) ||
			l["batch.kubernetes.io/job-name"] == job.Name || l["job-name"] == job.Name
		if mine && (!found || p.Created.After(best.Created)) {
			best, found = p, true
		}
	}
	return best, found
}

// rootCause returns the innermost error's text (the API server's reason
// rather than our "get pods/log in namespace x:" wrapper).
func rootCause(err error) string {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err.Error()
		}
		err = u.Unwrap()
	}
}

// RedactSecrets masks values that look like credentials in a log line
// ("token: abc", "password=abc", "Authorization: Bearer abc"), since a hook's
// debug log can echo its inputs. It is redact.String; reporters apply it
// again to everything they print (docs/json.md: no secret value).
func RedactSecrets(line string) string { return redact.String(line) }

// refusedJobPod reports a running validation Job whose pod the API server
// refuses: the Job controller's FailedCreate events, parsed into the layer
// and policy that refused, as the admission checks name them before the
// install. helm waits for such a hook until --timeout.
func refusedJobPod(env *Env, job cluster.Job) (Result, bool, error) {
	events, err := env.Cluster.WarningEvents(job.Namespace)
	if cluster.IsForbidden(err) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	for _, e := range events {
		if e.Kind != "Job" || e.Name != job.Name || e.Reason != "FailedCreate" {
			continue
		}
		r := admission.ParseRefusal(e.Message)
		p := &admission.Plan{Chart: "gitops-runtime"}
		msg := fmt.Sprintf("Job %s has no pod: the API server refuses it (%s, FailedCreate x%d): %s; helm waits for the hook until --timeout",
			job.Name, r.Short(), max(e.Count, 1), r.Detail)
		hint := fixFor(r, []string{job.Name}, true, p, job.Namespace, "")
		return Fail("%s", msg).WithHint(hint).WithObjects(ObjectRef{Kind: "Job", Namespace: job.Namespace, Name: job.Name}), true, nil
	}
	return Result{}, false, nil
}
