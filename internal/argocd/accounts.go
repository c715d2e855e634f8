package argocd

import (
	"sort"
	"strings"
)

// The capabilities of an Argo CD local account
// (https://argo-cd.readthedocs.io/en/stable/operator-manual/user-management/;
// util/settings/accounts.go, https://github.com/argoproj/argo-cd/blob/v3.2.6/util/settings/accounts.go).
const (
	// CapabilityAPIKey lets the account generate API tokens.
	CapabilityAPIKey = "apiKey"
	// CapabilityLogin lets it log in (UI session tokens).
	CapabilityLogin = "login"
)

// Account is a local account as argocd-cm declares it: the key
// "accounts.<name>" holds its capabilities (comma-separated, each
// trimmed), and "accounts.<name>.enabled": "false" disables it.
type Account struct {
	// Key is the capabilities' key ("accounts.admin"); Capabilities its
	// value as written ("" when absent).
	Key, Capabilities string
	// Disabled is accounts.<name>.enabled set to "false".
	Disabled bool
}

// AccountOf reads the account name of argocd-cm's data.
func AccountOf(data map[string]string, name string) Account {
	key := "accounts." + name
	return Account{Key: key, Capabilities: data[key], Disabled: data[key+".enabled"] == "false"}
}

// Lacks returns those of caps the account does not have, sorted.
func (a Account) Lacks(caps ...string) []string {
	has := map[string]bool{}
	for _, c := range strings.Split(a.Capabilities, ",") {
		has[strings.TrimSpace(c)] = true
	}
	var missing []string
	for _, c := range caps {
		if !has[c] {
			missing = append(missing, c)
		}
	}
	sort.Strings(missing)
	return missing
}
