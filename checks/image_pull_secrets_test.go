package checks

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestImagePullSecrets(t *testing.T) {
	c := imageChart(t)
	cfg := base64.StdEncoding.EncodeToString([]byte(`{"auths":{"https://quay.io":{"auth":"dTpw"}}}`))
	secret := `apiVersion: v1
kind: Secret
metadata: {name: quay-pull, namespace: codefresh}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: ` + cfg + `}`
	t.Run("no pull secret anywhere", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t)).withChart(c).run(ImagePullSecrets())
		outcome{StatusPass, []string{"pull anonymously or with the nodes' credentials"}}.expect(t, r)
	})
	t.Run("one component's secret marks quay.io: the others and the hook have none", func(t *testing.T) {
		r := newKit(t, secret).with(imageInputs(t, "app.imagePullSecrets[0].name=quay-pull")).withChart(c).run(ImagePullSecrets())
		outcome{StatusFail, []string{"quay.io (pull secret quay-pull names it)", "Deployment/op pulls from quay.io with no pull secret",
			"Job/validate-values (hook) pulls from quay.io with no pull secret for it (a hook: only the nodes' credentials serve it)", "give the nodes credentials for the registry"}}.expect(t, r)
	})
	t.Run("a pull secret that does not exist", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t, "app.imagePullSecrets[0].name=gone")).withChart(c).run(ImagePullSecrets())
		outcome{StatusFail, []string{"Deployment/app refers to pull secret gone, which does not exist in namespace codefresh"}}.expect(t, r)
	})
	t.Run("a live ServiceAccount's pull secret serves its pods", func(t *testing.T) {
		sa := `apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: codefresh}
imagePullSecrets: [{name: quay-pull}]`
		r := newKit(t, secret, sa).with(imageInputs(t, "app.imagePullSecrets[0].name=quay-pull")).withChart(c).run(ImagePullSecrets())
		// op and repo run as default; ctrl as app's ServiceAccount, which the
		// chart renders without one; the hook as validate-values-sa (set by
		// the deprecated serviceAccount field).
		outcome{StatusFail, []string{"2 of 5 pods cannot authenticate their pulls", "Deployment/ctrl pulls from quay.io with no pull secret", "Job/validate-values (hook) pulls from quay.io"}}.expect(t, r)
		if strings.Contains(r.Message, "Deployment/op") || strings.Contains(r.Message, "Deployment/repo") {
			t.Errorf("the default ServiceAccount's pull secret serves op and repo: %s", r.Message)
		}
	})
}
