package testcluster

import (
	"fmt"
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
	r, err := NewGitRepoIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewGitRepoIn is NewGitRepo for a program: the repository in dir, an
// empty directory.
func NewGitRepoIn(dir string) (*GitRepo, error) {
	r := &GitRepo{Bare: filepath.Join(dir, "repo.git"), work: filepath.Join(dir, "work")}
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{dir, []string{"init", "--quiet", "--bare", "--initial-branch=main", r.Bare}},
		{dir, []string{"init", "--quiet", "--initial-branch=main", r.work}},
		{r.work, []string{"remote", "add", "origin", r.Bare}},
	} {
		if _, err := r.run(step.dir, step.args...); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// URL is the repository's file:// URL (an Application's spec.source.repoURL).
func (r *GitRepo) URL() string { return "file://" + r.Bare }

// Commit makes path (slash-separated, relative to the repository's root)
// hold exactly the files of src, a directory (what path held before is
// removed; an empty src removes path), commits that with message on main,
// pushes it to the bare repository and returns the commit's SHA.
func (r *GitRepo) Commit(t testing.TB, src, path, message string) string {
	t.Helper()
	rev, err := r.Push(src, path, message)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// Push is Commit for a program.
func (r *GitRepo) Push(src, path, message string) (string, error) {
	dst := filepath.Join(r.work, filepath.FromSlash(path))
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	if src != "" {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			return "", fmt.Errorf("copying %s into the repository: %w", src, err)
		}
	}
	for _, args := range [][]string{{"add", "--all"}, {"commit", "--quiet", "--allow-empty", "-m", message}, {"push", "--quiet", "origin", "main"}} {
		if _, err := r.run(r.work, args...); err != nil {
			return "", err
		}
	}
	out, err := r.run(r.work, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
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
	out, err := r.run(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// run is git for a program: the error holds git's output.
func (r *GitRepo) run(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
