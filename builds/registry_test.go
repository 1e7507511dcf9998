package builds

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The builds from PyPI and npm, and from local paths made of what they
// serve: each build is run against kfake, and reports the version it was
// given (or the one written into the path's copy), so it ran with that
// build. A version the registry does not serve is its answer in the error.
// They ask PyPI, npm and Maven Central, so they run only with
// KCHECK_REGISTRY=1 (make gotest sets it).

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	if os.Getenv("KCHECK_REGISTRY") != "1" {
		t.Skip("set KCHECK_REGISTRY=1 to install from PyPI, npm and Maven Central (make gotest)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
}

// extract unpacks the tarball tgz into a new directory and returns the one
// directory it holds.
func extract(t *testing.T, tgz string) string {
	t.Helper()
	d := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", tgz, "-C", d).CombinedOutput(); err != nil {
		t.Fatalf("tar -xzf %s: %v: %s", tgz, err, out)
	}
	es, err := os.ReadDir(d)
	if err != nil || len(es) != 1 {
		t.Fatalf("%s holds %d entries (%v), want one directory", tgz, len(es), err)
	}
	return filepath.Join(d, es[0].Name())
}

// rewrite replaces the first match of re in the file at path with repl.
func rewrite(t *testing.T, path, re, repl string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := regexp.MustCompile(re)
	loc := r.FindIndex(b)
	if loc == nil {
		t.Fatalf("%s: no %s in it", path, re)
	}
	b = append(append(append([]byte{}, b[:loc[0]]...), repl...), b[loc[1]:]...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildPython(t *testing.T) {
	needTools(t, python(), "tar")
	env := testEnv(t)
	for _, c := range []struct{ given, client, version string }{
		{"kafka-python@3.0.11", "kafka-python", "3.0.11"},
		{"aiokafka@0.13.0", "aiokafka", "0.13.0"},
		{"librdkafka@2.8.0", "librdkafka", "2.8.0"},
	} {
		argv := build(t, env, c.given)
		if got := runOnKfake(t, argv); got.Client != c.client || got.Version != c.version {
			t.Errorf("%s ran as %s %s", c.given, got.Client, got.Version)
		}
	}

	// kafka-python's sdist from PyPI, its version changed: a source tree.
	dl := t.TempDir()
	cmd := exec.Command(python(), "-m", "pip", "download", "--disable-pip-version-check", "--no-deps", "--no-binary", ":all:", "-d", dl, "kafka-python==3.0.12")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip download kafka-python==3.0.12: %v: %s", err, out)
	}
	sdists, _ := filepath.Glob(filepath.Join(dl, "*.tar.gz"))
	if len(sdists) != 1 {
		t.Fatalf("pip download left %v", sdists)
	}
	src := extract(t, sdists[0])
	rewrite(t, filepath.Join(src, "kafka", "version.py"), `3\.0\.12`, "3.0.12.post1")
	argv := build(t, env, "kafka-python@"+src)
	if got := runOnKfake(t, argv); got.Version != "3.0.12.post1" {
		t.Errorf("kafka-python@%s ran as %s %s", src, got.Client, got.Version)
	}
	if _, err := os.Stat(filepath.Join(src, "build")); err == nil {
		t.Errorf("pip built in %s: want it to build in a copy", src)
	}

	s, err := mustParse(t, "aiokafka@0.0.0").Resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), env, s)
	if err == nil || !strings.Contains(err.Error(), "PyPI (or PIP_INDEX_URL) did not give aiokafka==0.0.0") ||
		!strings.Contains(err.Error(), "No matching distribution found for aiokafka==0.0.0") {
		t.Errorf("aiokafka@0.0.0: %v; want PyPI's answer", err)
	}
}

func TestBuildKafkajs(t *testing.T) {
	needTools(t, node(), "npm", "tar")
	env := testEnv(t)
	argv := build(t, env, "kafkajs@2.2.3")
	if got := runOnKfake(t, argv); got.Client != "kafkajs" || got.Version != "2.2.3" {
		t.Errorf("kafkajs@2.2.3 ran as %s %s", got.Client, got.Version)
	}

	// kafkajs 2.2.4 as npm packs it, its version changed: a checkout.
	dl := t.TempDir()
	cmd := exec.Command("npm", "pack", "--silent", "kafkajs@2.2.4")
	cmd.Dir = dl
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm pack kafkajs@2.2.4: %v: %s", err, out)
	}
	src := extract(t, filepath.Join(dl, "kafkajs-2.2.4.tgz"))
	rewrite(t, filepath.Join(src, "package.json"), `"version": "2\.2\.4"`, `"version": "2.2.4-kcheck.1"`)
	argv = build(t, env, "kafkajs@"+src)
	if got := runOnKfake(t, argv); got.Version != "2.2.4-kcheck.1" {
		t.Errorf("kafkajs@%s ran as %s %s", src, got.Client, got.Version)
	}

	s, err := mustParse(t, "kafkajs@0.0.0-nope").Resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), env, s)
	if err == nil || !strings.Contains(err.Error(), "did not give kafkajs@0.0.0-nope") ||
		!strings.Contains(err.Error(), "No matching version found for kafkajs@0.0.0-nope") {
		t.Errorf("kafkajs@0.0.0-nope: %v; want npm's answer", err)
	}
}

func TestBuildJavaVersionRefused(t *testing.T) {
	needTools(t, "mvn", "java")
	s, err := mustParse(t, "java@0.0.1-nope").Resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), testEnv(t), s)
	if err == nil || !strings.Contains(err.Error(), `Maven Central does not serve it: "Could not find artifact org.apache.kafka:kafka-clients:jar:0.0.1-nope in central (https://repo.maven.apache.org/maven2)"`) {
		t.Errorf("java@0.0.1-nope: %v; want Maven Central's answer", err)
	}
}
