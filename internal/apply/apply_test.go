package apply

import "testing"

func TestRefusalsNameTheObjects(t *testing.T) {
	got := refusals(`cannot patch "cap-app-proxy" with kind Deployment: Deployment.apps "cap-app-proxy" is invalid: spec.selector: Invalid value: field is immutable && cannot patch "redis" with kind StatefulSet: forbidden`)
	if len(got) != 2 || got[0].Name != "cap-app-proxy" || got[0].Kind != "Deployment" || got[1].Name != "redis" || got[1].Kind != "StatefulSet" {
		t.Errorf("refusals = %+v", got)
	}
}
