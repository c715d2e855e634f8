package argocd

import (
	"reflect"
	"testing"
)

// TestAccountOf reads a local account's capabilities and whether it is
// disabled from argocd-cm's data.
func TestAccountOf(t *testing.T) {
	data := map[string]string{"accounts.admin": " login ,apiKey", "accounts.ci": "apiKey", "accounts.ci.enabled": "false"}
	a := AccountOf(data, "admin")
	if a.Key != "accounts.admin" || a.Capabilities != " login ,apiKey" || a.Disabled || len(a.Lacks(CapabilityAPIKey, CapabilityLogin)) != 0 {
		t.Errorf("admin %+v lacks %v", a, a.Lacks(CapabilityAPIKey, CapabilityLogin))
	}
	a = AccountOf(data, "ci")
	if !a.Disabled || !reflect.DeepEqual(a.Lacks(CapabilityLogin, CapabilityAPIKey), []string{"login"}) {
		t.Errorf("ci %+v lacks %v", a, a.Lacks(CapabilityLogin, CapabilityAPIKey))
	}
	if got := AccountOf(nil, "nobody").Lacks(CapabilityLogin, CapabilityAPIKey); !reflect.DeepEqual(got, []string{"apiKey", "login"}) {
		t.Errorf("an undeclared account lacks %v", got)
	}
}
