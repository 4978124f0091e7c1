package state

import (
	"github.com/driftfix/driftfix/bot/memo"
)

// testSeal is the bot's own seal (memo.Seal) of a test credential.
var testSeal = func() memo.Seal {
	s, err := memo.NewSeal([]byte("the GitHub App's key"), [32]byte{1})
	if err != nil {
		panic(err)
	}
	return s
}()
