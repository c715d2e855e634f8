package testcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitRepo is a Git repository on local disk that Argo CD's repo-server
// reads over a file:// URL, as Argo CD's own end-to-end tests do
// (https://github.com/argoproj/argo-cd/blob/v3.6.1/test/e2e/fixture/fixture.go,
// RepoURLTypeFile): a bare repository whose HEAD is the branch main, and a
// work tree beside it that Commit writes through. It stands for the
// Codefresh Shared Configuration Repository, which holds a runtime's chart
// at resources/<runtime>/chart
// (https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/).
type GitRepo struct {
	// Bare is the bare repository's directory.
	Bare string
	work string
}

// NewGitRepo creates an empty bare repository (branch main) in a temporary
// directory of t. It needs git on PATH.
func NewGitRepo(t testing.TB) *GitRepo {
	t.Helper()
	dir := t.TempDir()
	r := &GitRepo{Bare: filepath.Join(dir, "repo.git"), work: filepath.Join(dir, "work")}
	r.git(t, dir, "init", "--quiet", "--bare", "--initial-branch=main", r.Bare)
	r.git(t, dir, "init", "--quiet", "--initial-branch=main", r.work)
	r.git(t, r.work, "remote", "add", "origin", r.Bare)
	return r
}

// URL is the repository's file:// URL (an Application's spec.source.repoURL).
func (r *GitRepo) URL() string { return "file://" + r.Bare }

// Commit makes path (slash-separated, relative to the repository's root)
// hold exactly the files of src, a directory (what path held before is
// removed; an empty src removes path), commits that with message on main,
// pushes it to the bare repository and returns the commit's SHA.
func (r *GitRepo) Commit(t testing.TB, src, path, message string) string {
	t.Helper()
	dst := filepath.Join(r.work, filepath.FromSlash(path))
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	if src != "" {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatalf("copying %s into the repository: %v", src, err)
		}
	}
	r.git(t, r.work, "add", "--all")
	r.git(t, r.work, "commit", "--quiet", "--allow-empty", "-m", message)
	r.git(t, r.work, "push", "--quiet", "origin", "main")
	return strings.TrimSpace(r.git(t, r.work, "rev-parse", "HEAD"))
}

// Checkout writes the tree of revision (a commit SHA) into a new temporary
// directory of t and returns it: what a sync of that revision reads.
func (r *GitRepo) Checkout(t testing.TB, revision string) string {
	t.Helper()
	dir := t.TempDir()
	r.git(t, r.work, "--work-tree="+dir, "checkout", revision, "--", ".")
	// The index now describes revision's tree: put it back to HEAD's.
	r.git(t, r.work, "reset", "--quiet")
	return dir
}

// git runs git in dir with an identity and configuration of its own (no
// global or system configuration of the machine) and returns its output.
func (r *GitRepo) git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
