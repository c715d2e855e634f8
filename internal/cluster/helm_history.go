package cluster

import (
	rspb "helm.sh/helm/v3/pkg/release"
)

// HelmHistory returns the revisions of release name in namespace ns that
// `helm upgrade` reads (Helm's pkg/action/upgrade.go prepareUpgrade): the
// latest one and, when its status label is not deployed, the last deployed
// one, each decoded within MaxReleaseSize (HelmRelease). It returns no
// revision when the release has none in ns. Errors are HelmRevisions' and
// HelmRelease's.
func (s *Snapshot) HelmHistory(ns, name string) ([]*rspb.Release, error) {
	revs, err := s.HelmRevisions()
	if err != nil {
		return nil, err
	}
	var latest, deployed *HelmRevision
	for i := range revs {
		r := &revs[i]
		if r.Namespace != ns || r.Name != name {
			continue
		}
		if latest == nil || r.Version > latest.Version {
			latest = r
		}
		if r.Status == string(rspb.StatusDeployed) && (deployed == nil || r.Version > deployed.Version) {
			deployed = r
		}
	}
	if latest == nil {
		return nil, nil
	}
	read := []*HelmRevision{latest}
	if deployed != nil && deployed != latest {
		read = []*HelmRevision{deployed, latest}
	}
	var out []*rspb.Release
	for _, r := range read {
		rls, err := s.HelmRelease(*r)
		if err != nil {
			return nil, err
		}
		out = append(out, rls)
	}
	return out, nil
}
