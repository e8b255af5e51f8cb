package container

import (
	"io"
	"log/slog"
	"strconv"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func itoa(i int) string { return strconv.Itoa(i) }
