package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// A flag's attributes are pflag annotations set where the flag is declared
// (describe, replayable): the section of the help it is shown in and its
// place there, whether a bundle records its effect (--bundle: the run's
// spec keeps it, and a replay runs with it), and whether `replay FILE`
// takes it too. TestEveryFlagIsDescribed holds every flag of the command to
// them, and proves for each recorded one that a replay compiles it as the
// live run did.
const (
	// helpAnnotation is the help section's title and the flag's rank in
	// it (a decimal number; a new flag takes the next rank of its section;
	// the connection section's flags are all rank 0, shown by name).
	helpAnnotation = "gitops-preflight.io/help"
	// bundleAnnotation is "recorded", or "not recorded" and why.
	bundleAnnotation = "gitops-preflight.io/bundle"
	// replayAnnotation, on a flag `replay FILE` takes too, is its help
	// there, where it changes the recorded run (run.Overrides).
	replayAnnotation = "gitops-preflight.io/replay"
)

// Help sections, in the order the help shows them: the way kubectl groups
// its commands ("Basic Commands") and `kubectl options` its flags.
const (
	sectionRun        = "The run"
	sectionPlan       = "The planned install (as helm install and helm upgrade take it)"
	sectionFleet      = "Many clusters"
	sectionCI         = "In CI and in the cluster"
	sectionOutput     = "Output"
	sectionFix        = "Fix (writes to the cluster)"
	sectionConnection = "Cluster connection and network probes"
)

// helpSections are the sections of the root command's help, in order.
var helpSections = []string{sectionRun, sectionPlan, sectionFleet, sectionCI, sectionOutput, sectionFix, sectionConnection}

// placement is where the help shows a flag: its section and rank there.
type placement struct {
	section string
	rank    int
}

// bundleUse says whether a bundle records a flag's effect; a flag whose
// effect it does not record says why.
type bundleUse struct {
	recorded bool
	why      string
}

// recorded is the bundleUse of a flag whose effect a bundle records (in the
// compiled run it keeps): a replay runs with it.
var recorded = bundleUse{recorded: true}

// notRecorded is the bundleUse of a flag a bundle does not keep.
func notRecorded(why string) bundleUse { return bundleUse{why: why} }

// describe annotates the flag name of fs with its help placement and its
// bundleUse. The flag must exist.
func describe(fs *pflag.FlagSet, name string, at placement, b bundleUse) {
	f := fs.Lookup(name)
	if f == nil {
		panic("describe: no flag --" + name)
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[helpAnnotation] = []string{at.section, strconv.Itoa(at.rank)}
	if b.recorded {
		f.Annotations[bundleAnnotation] = []string{"recorded"}
	} else {
		f.Annotations[bundleAnnotation] = []string{"not recorded", b.why}
	}
}

// replayable annotates the flag name of fs as one `replay FILE` takes too,
// with its help there. The flag must exist.
func replayable(fs *pflag.FlagSet, name, usage string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("replayable: no flag --" + name)
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[replayAnnotation] = []string{usage}
}

// replayUsage is f's help as `replay FILE` takes it, and false when replay
// does not take it.
func replayUsage(f *pflag.Flag) (string, bool) {
	a := f.Annotations[replayAnnotation]
	if len(a) != 1 {
		return "", false
	}
	return a[0], true
}

// helpPlacement returns where the help shows f, and false when f was not
// described.
func helpPlacement(f *pflag.Flag) (placement, bool) {
	a := f.Annotations[helpAnnotation]
	if len(a) != 2 {
		return placement{}, false
	}
	rank, err := strconv.Atoi(a[1])
	if err != nil {
		return placement{}, false
	}
	return placement{section: a[0], rank: rank}, true
}

// isRecorded reports whether a bundle records f's effect, and an error when
// f says neither.
func isRecorded(f *pflag.Flag) (bool, error) {
	switch a := f.Annotations[bundleAnnotation]; {
	case len(a) == 1 && a[0] == "recorded":
		return true, nil
	case len(a) == 2 && a[0] == "not recorded" && a[1] != "":
		return false, nil
	}
	return false, fmt.Errorf("--%s does not say whether a bundle records it", f.Name)
}
