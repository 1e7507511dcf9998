package builds

import (
	"context"
	"os/exec"
	"path/filepath"
)

// buildJava builds the Java driver against kafka-clients VERSION from Maven
// Central or the jar at Path (drivers/java/build.sh, which caches the jar).
func buildJava(ctx context.Context, env Env, s Spec) ([]string, error) {
	args := []string{s.Version}
	if s.Path != "" {
		args = []string{"--jar", s.Path}
	}
	script := filepath.Join(env.Root, "drivers", "java", "build.sh")
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Dir = env.Root
	cmd.Env = withEnv("KCHECK_CACHE=" + env.Cache)
	jar, err := output(cmd, env.Log, "drivers/java/build.sh "+joinArgs(args))
	if err != nil {
		return nil, err
	}
	return []string{"java", "-jar", jar}, nil
}
