package builds

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A version the registry does not serve is its answer in the error. The
// tests ask the registries, so they run only with KCHECK_REGISTRY=1 (make
// gotest sets it).

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
