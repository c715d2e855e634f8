package cluster

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HelmReleaseSummary is the little of a decoded release revision the checks
// keep: which chart it installed and its status. Keeping only this (not the
// release's manifest, values and chart files, which can weigh megabytes) keeps
// memory flat on clusters with many releases.
type HelmReleaseSummary struct {
	HelmRevision
	Chart        string // chart name, e.g. "gitops-runtime"
	ChartVersion string
	AppVersion   string
	// Unreadable says why the payload was not decoded (over MaxReleaseSize
	// once decompressed); Chart and the versions are then empty.
	Unreadable string
}

// HelmReleaseSummary reads and decodes one release revision's Secret (one
// GET) and keeps only its chart and status, memoised per snapshot. Errors are
// *ListError (get secrets) or decoding errors.
func (s *Snapshot) HelmReleaseSummary(rev HelmRevision) (HelmReleaseSummary, error) {
	return Memo(s, "helm/summary/"+rev.Namespace+"/"+rev.SecretName, func() (HelmReleaseSummary, error) {
		sec, err := s.clients.Kube.CoreV1().Secrets(rev.Namespace).Get(s.ctx, rev.SecretName, metav1.GetOptions{})
		if err != nil {
			return HelmReleaseSummary{}, &ListError{Verb: "get", Resource: "secrets", Namespace: rev.Namespace, Err: err}
		}
		rls, err := DecodeHelmRelease(sec)
		var ue *UnreadableReleaseError
		if errors.As(err, &ue) {
			return HelmReleaseSummary{HelmRevision: rev, Unreadable: ue.Reason}, nil
		}
		if err != nil {
			return HelmReleaseSummary{}, err
		}
		out := HelmReleaseSummary{HelmRevision: rev}
		if rls.Info != nil && rls.Info.Status != "" {
			out.Status = rls.Info.Status.String()
		}
		if rls.Chart != nil && rls.Chart.Metadata != nil {
			out.Chart = rls.Chart.Metadata.Name
			out.ChartVersion = rls.Chart.Metadata.Version
			out.AppVersion = rls.Chart.Metadata.AppVersion
		}
		return out, nil
	})
}
