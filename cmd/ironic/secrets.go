package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/rpc/ovo"
	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// keyRing is the key ring [openkeel_secrets] names; nil when key_files is
// unset (secrets stored in plain text, as upstream).
func keyRing(cfg *config.Config) (*secrets.KeyRing, error) {
	files := cfg.ListOf(config.OpenkeelSecretsKeyFiles)
	if len(files) == 0 {
		return nil, nil
	}
	r, err := secrets.LoadKeyRing(files, cfg.StringOf(config.OpenkeelSecretsCurrentKeyID))
	if err != nil {
		return nil, fmt.Errorf("[openkeel_secrets]: %w", err)
	}
	return r, nil
}

// newStore is the store over db with the configured key ring, checked
// against what the database holds: a process whose keys do not open the
// stored secrets refuses to start, rather than send sealed text to a BMC.
func newStore(ctx context.Context, cfg *config.Config, db *sqldb.DB) (store.Store, error) {
	r, err := keyRing(cfg)
	if err != nil {
		return nil, err
	}
	if err := store.CheckKeyRing(ctx, db, r); err != nil {
		return nil, fmt.Errorf("refusing to start: the key ring does not open the secrets stored: %w", err)
	}
	// Conductors register at the pinned release's Conductor version, so
	// that an upstream Ironic of that release sharing the database reads
	// their rows (issue 28, docs/migrating.md).
	objects, err := ovo.NewCodec(cfg.StringOf(config.DefaultPinReleaseVersion))
	if err != nil {
		return nil, err
	}
	return store.New(db, store.WithChangeRetention(cfg.DurationOf(config.OpenkeelChangesRetention)), store.WithKeyRing(r), store.WithConductorVersion(objects.Version(ovo.ConductorClass))), nil
}

// killAfterEnv names the test hook that makes `secrets` kill itself
// (SIGKILL) after that many nodes rewritten, to prove a run cut anywhere
// loses nothing and is finished by the next.
const killAfterEnv = "OPENKEEL_TEST_SECRETS_KILL_AFTER"

// secretsCommand is `ironic secrets encrypt|rotate|decrypt`: the nodes'
// secret values sealed under the current key, sealed anew under it, or
// opened back to plain text (for upstream Ironic), row by row while the
// service may run, with counts.
func secretsCommand(ctx context.Context, inv *invocation, stdout, stderr io.Writer) error {
	ops := map[string]secrets.Op{"encrypt": secrets.Encrypt, "rotate": secrets.Rotate, "decrypt": secrets.Decrypt}
	if len(inv.args) != 1 {
		return fmt.Errorf("%w: secrets needs one of encrypt, rotate, decrypt", errUsage)
	}
	op, ok := ops[inv.args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown secrets command %q", errUsage, inv.args[0])
	}
	cfg, _, err := loadConfig(modeDBSync, inv.load, stderr)
	if err != nil {
		return err
	}
	r, err := keyRing(cfg)
	if err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("secrets %s: no key ring: set [openkeel_secrets]/key_files", op)
	}
	db, err := openDatabase(ctx, cfg, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := checkSchema(ctx, db); err != nil {
		return err
	}
	var o store.ConvertOptions
	if n, err := strconv.Atoi(os.Getenv(killAfterEnv)); err == nil && n > 0 {
		o.AfterRow = func(done int) {
			if done >= n {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	rep, err := store.ConvertSecrets(ctx, db, r, op, o)
	fmt.Fprintf(stdout, "secrets %s: %d nodes and %d volume targets and steps read, %d rewritten, %d values %s, %d rewrites retried after a concurrent write\n",
		op, rep.Nodes, rep.Others, rep.Rewritten, rep.Values, map[secrets.Op]string{secrets.Encrypt: "encrypted", secrets.Rotate: "re-encrypted under key " + r.CurrentID(), secrets.Decrypt: "decrypted"}[op], rep.Retries)
	if err != nil {
		return fmt.Errorf("secrets %s: %w (run it again to go on)", op, err)
	}
	return nil
}

// checkSecretsAtRest is the upgrade check of secrets: plain ones are a
// warning (upstream stores them so; a key ring seals them), sealed ones
// the key ring cannot open a failure.
func checkSecretsAtRest(ctx context.Context, cfg *config.Config) checkResult {
	if _, absent := absentDatabase(cfg); absent {
		return checkResult{}
	}
	r, err := keyRing(cfg)
	if err != nil {
		return checkResult{2, err.Error()}
	}
	db, err := openDatabase(ctx, cfg, false)
	if err != nil {
		return checkResult{2, err.Error()}
	}
	defer db.Close()
	if err := store.CheckKeyRing(ctx, db, r); err != nil {
		return checkResult{2, err.Error()}
	}
	sv, err := store.SurveySecrets(ctx, db)
	if err != nil {
		return checkResult{2, err.Error()}
	}
	var sealed []string
	for id, n := range sv.Counts.Sealed {
		sealed = append(sealed, fmt.Sprintf("%d under key %s", n, id))
	}
	sort.Strings(sealed)
	switch {
	case sv.Counts.Plain > 0 && r == nil:
		return checkResult{1, fmt.Sprintf("%d secret values of %d nodes and %d volume targets or steps (BMC credentials, instance secrets, agent tokens, CHAP and step passwords) are stored in plain text: "+
			"configure a key ring ([openkeel_secrets]/key_files) and run `ironic secrets encrypt` (docs/operations.md)", sv.Counts.Plain, sv.PlainNodes, sv.PlainOthers)}
	case sv.Counts.Plain > 0:
		return checkResult{1, fmt.Sprintf("%d secret values of %d nodes and %d volume targets or steps are stored in plain text (written before the key ring): run `ironic secrets encrypt`", sv.Counts.Plain, sv.PlainNodes, sv.PlainOthers)}
	case r != nil && sv.Counts.Sealed[r.CurrentID()] < total(sv.Counts.Sealed):
		return checkResult{1, fmt.Sprintf("secrets are sealed under keys other than the current %s (%s): run `ironic secrets rotate` before removing an old key", r.CurrentID(), strings.Join(sealed, ", "))}
	}
	return checkResult{}
}

// total is the sum of counts.
func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
