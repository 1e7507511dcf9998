package builds

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kafkajsSnappy is the snappy codec the kafkajs driver loads for
// --compression snappy (drivers/kafkajs/package.json).
const kafkajsSnappy = "kafkajs-snappy@1.1.0"

// node is the node the driver runs with, as drivers/kafkajs/setup.sh picks
// it: $NODE, or node on PATH.
func node() string {
	if n := os.Getenv("NODE"); n != "" {
		return n
	}
	return "node"
}

// buildKafkajs installs kafkajs (kafkajs@VERSION from npm, or the checkout
// or npm pack tarball at Path) with the driver's snappy codec into a
// directory of its own in the cache, once: npm install --install-links, so
// that a checkout is packed and copied in, not linked, and
// --ignore-scripts, so that none of its development scripts run. Like
// drivers/kafkajs/setup.sh it returns a node wrapper that sets NODE_PATH to
// the modules.
func buildKafkajs(ctx context.Context, env Env, s Spec) ([]string, error) {
	req := "kafkajs@" + s.Version
	if s.Path != "" {
		if err := kafkajsPackage(s.Path); err != nil {
			return nil, err
		}
		req = s.Path
	}
	nodeBin, err := exec.LookPath(node())
	if err != nil {
		return nil, fmt.Errorf("%s not found: install Node.js 20 or later (with npm), or set NODE to a node binary", node())
	}
	if nodeBin, err = filepath.Abs(nodeBin); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, fmt.Errorf("npm not found: install npm (it comes with Node.js) and put it on PATH")
	}
	ver, err := exec.CommandContext(ctx, nodeBin, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", nodeBin, err)
	}
	dir, err := env.dir(s)
	if err != nil {
		return nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	wrapper, stamp := filepath.Join(dir, "bin", "node"), filepath.Join(dir, ".kcheck-build")
	want := s.Name() + "\n" + req + " " + kafkajsSnappy + "\n" + nodeBin + " " + strings.TrimSpace(string(ver)) + "\n"
	if b, err := os.ReadFile(stamp); err == nil && string(b) == want {
		return []string{wrapper, filepath.Join(env.Root, "drivers", "kafkajs", "driver.js")}, nil
	}
	os.Remove(stamp)
	for _, d := range []string{"node_modules", "package.json", "package-lock.json", "bin"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return nil, err
		}
	}
	pkg := `{"name": "kcheck-kafkajs-build", "version": "0.0.0", "private": true}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Log, "builds: installing %s into %s\n", req, dir)
	args := []string{"install", "--no-audit", "--no-fund", "--loglevel=error", "--install-links", "--ignore-scripts", req, kafkajsSnappy}
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	if err := run(cmd, env.Log, "npm "+joinArgs(args)); err != nil {
		if s.Version != "" {
			return nil, fmt.Errorf("npm (registry.npmjs.org, or npm_config_registry) did not give %s: %w", req, err)
		}
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, err
	}
	script := fmt.Sprintf("#!/bin/sh\n# Written by kcheck (builds): %s with the modules of %s.\nNODE_PATH=%s exec %s \"$@\"\n",
		nodeBin, dir, shellQuote(filepath.Join(dir, "node_modules")), shellQuote(nodeBin))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return nil, err
	}
	cmd = exec.CommandContext(ctx, wrapper, "-e", `require("kafkajs"); require("kafkajs-snappy")`)
	if err := run(cmd, env.Log, "node -e 'require(\"kafkajs\")'"); err != nil {
		return nil, fmt.Errorf("installed, but does not load: %w", err)
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		return nil, err
	}
	return []string{wrapper, filepath.Join(env.Root, "drivers", "kafkajs", "driver.js")}, nil
}

// kafkajsPackage checks that a checkout is kafkajs's package (a tarball is
// checked by npm's install and the load after it).
func kafkajsPackage(path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return err
	}
	b, err := os.ReadFile(filepath.Join(path, "package.json"))
	if err != nil {
		return fmt.Errorf("%s: no package.json: not a kafkajs checkout", path)
	}
	var p struct{ Name string }
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("%s/package.json: %w", path, err)
	}
	if p.Name != "kafkajs" {
		return fmt.Errorf("%s/package.json names the package %q, not kafkajs", path, p.Name)
	}
	return nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
