package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/wire"
)

// LowerFeature lowers the cluster's finalized feature name (such as
// transaction.version) to level with UpdateFeatures (a safe downgrade, as
// kafka-features.sh downgrade does), through the broker at addr, and waits
// until that broker's ApiVersions answer shows it. A feature already at
// level or below is left alone. It returns the level the cluster had.
func LowerFeature(ctx context.Context, addr, name string, level int16) (int16, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	was, err := featureLevel(ctx, addr, name)
	if err != nil || was <= level {
		return was, err
	}
	conn, err := wire.Dial(ctx, addr, "kcheck-kafka")
	if err != nil {
		return was, fmt.Errorf("kafka: lowering %s: %w", name, err)
	}
	defer conn.Close()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.TimeoutMillis = 30000
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel = name, level
	u.UpgradeType = 2 // SAFE_DOWNGRADE (v1+; v0 reads AllowDowngrade)
	u.AllowDowngrade = true
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	resp, err := conn.Request(ctx, req)
	if err != nil {
		return was, fmt.Errorf("kafka: lowering %s to %d: %w", name, level, err)
	}
	r := resp.(*kmsg.UpdateFeaturesResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return was, fmt.Errorf("kafka: lowering %s to %d: %w (%s)", name, level, err, str(r.ErrorMessage))
	}
	for _, res := range r.Results {
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return was, fmt.Errorf("kafka: lowering %s to %d: %w (%s)", res.Feature, level, err, str(res.ErrorMessage))
		}
	}
	// The brokers learn the new level from the metadata log: a client
	// that connects before it would still be told the old one.
	for {
		now, err := featureLevel(ctx, addr, name)
		if err == nil && now <= level {
			return was, nil
		}
		select {
		case <-ctx.Done():
			return was, fmt.Errorf("kafka: %s still at %d after lowering it to %d: %w", name, now, level, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// featureLevel is the finalized level of feature name that the broker at
// addr's ApiVersions answer shows (0: none).
func featureLevel(ctx context.Context, addr, name string) (int16, error) {
	conn, err := wire.Dial(ctx, addr, "kcheck-kafka")
	if err != nil {
		return 0, fmt.Errorf("kafka: reading feature %s: %w", name, err)
	}
	defer conn.Close()
	return conn.Feature(name), nil
}

func str(s *string) string {
	if s == nil {
		return "no message"
	}
	return *s
}
