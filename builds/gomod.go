package builds

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildGo builds the Go driver drivers/NAME with the client's module
// replaced by the checkout at Path: kcheck's go.mod and go.sum are copied
// into the build's directory in the cache, a replace directive added there
// (go mod edit), and go build -modfile reads that copy, -mod=mod letting it
// add what the checkout requires (from the Go module proxy). kcheck's own
// go.mod is never written. Every module nested in the checkout whose path
// is under the client's (franz-go's pkg/kmsg) is replaced by its directory
// too: a checkout is built as a whole. The binary is built anew each time
// (go's build cache makes that quick), so a change to the driver is built.
func buildGo(ctx context.Context, env Env, s Spec, name string) ([]string, error) {
	k, _ := kindOf(s.Client)
	dir, err := env.dir(s)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	modfile := filepath.Join(tmp, "go.mod")
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := copyFile(filepath.Join(env.Root, f), filepath.Join(tmp, f), 0o644); err != nil {
			return nil, fmt.Errorf("copying kcheck's %s: %w", f, err)
		}
	}
	mods, err := nestedModules(s.Path, k.module)
	if err != nil {
		return nil, err
	}
	edit := []string{"mod", "edit"}
	var shown []string
	for _, m := range mods {
		edit = append(edit, "-replace="+m.path+"="+m.dir)
		shown = append(shown, m.path+" => "+m.dir)
	}
	edit = append(edit, modfile)
	cmd := exec.CommandContext(ctx, "go", edit...)
	cmd.Dir, cmd.Env = env.Root, withEnv("GOWORK=off")
	if err := run(cmd, env.Log, "go "+joinArgs(edit)); err != nil {
		return nil, err
	}
	bin := filepath.Join(tmp, "kcheck-"+name+"-driver")
	args := []string{"build", "-modfile=" + modfile, "-mod=mod", "-o", bin, "./drivers/" + name}
	fmt.Fprintf(env.Log, "builds: go build ./drivers/%s with %s\n", name, strings.Join(shown, ", "))
	cmd = exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = env.Root, withEnv("GOWORK=off")
	if err := run(cmd, env.Log, fmt.Sprintf("go build ./drivers/%s with replace %s", name, strings.Join(shown, ", "))); err != nil {
		return nil, err
	}
	// Kept beside the binary: the module file it was built with.
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := os.Rename(filepath.Join(tmp, f), filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(dir, "kcheck-"+name+"-driver")
	if err := os.Rename(bin, out); err != nil {
		return nil, err
	}
	return []string{out}, nil
}

type module struct{ path, dir string }

// nestedModules lists the module at root (which must be path) and every
// module below it whose path is under path, leaving out testdata, vendor
// and hidden directories as the go command does.
func nestedModules(root, path string) ([]module, error) {
	mods := []module{{path, root}}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == root {
			return nil
		}
		if n := d.Name(); n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			return filepath.SkipDir
		}
		m, err := modulePath(filepath.Join(p, "go.mod"))
		if err != nil {
			return nil // no go.mod here: a package of the module above
		}
		if strings.HasPrefix(m, path+"/") {
			mods = append(mods, module{m, p})
		}
		return nil
	})
	return mods, err
}
