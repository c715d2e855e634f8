package cluster

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Job summarises a batch/v1 Job.
type Job struct {
	Namespace, Name string
	UID             types.UID
	// Failed is true when the Failed condition is True; Reason and Message
	// are that condition's (BackoffLimitExceeded, DeadlineExceeded, ...).
	Failed          bool
	Reason, Message string
	// Complete is true when the Complete condition is True.
	Complete bool
	Active   int32
	// Containers are the pod template's container names.
	Containers []string
}

// JobFrom summarises a Job.
func JobFrom(j *batchv1.Job) Job {
	out := Job{Namespace: j.Namespace, Name: j.Name, UID: j.UID, Active: j.Status.Active}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			out.Failed, out.Reason, out.Message = true, c.Reason, c.Message
		case batchv1.JobComplete:
			out.Complete = true
		}
	}
	for _, c := range j.Spec.Template.Spec.Containers {
		out.Containers = append(out.Containers, c.Name)
	}
	return out
}

// Job gets one Job by name (a GET), once per snapshot; found is false when
// it does not exist.
func (s *Snapshot) Job(namespace, name string) (job Job, found bool, err error) {
	return getOne(s, "job/"+namespace+"/"+name, "jobs", namespace, name,
		s.clients.Kube.BatchV1().Jobs(namespace).Get, JobFrom)
}
