package store

import "payments/pkg/vault"

// sealedAttr is a vault.Sealed as stored: a map of its parts, in binary.
type sealedAttr struct {
	KeyID      string `dynamodbav:"key_id"`
	DataKey    []byte `dynamodbav:"data_key"`
	Nonce      []byte `dynamodbav:"nonce"`
	Ciphertext []byte `dynamodbav:"ciphertext"`
}

func newSealedAttr(s vault.Sealed) sealedAttr {
	return sealedAttr{KeyID: s.KeyID, DataKey: s.DataKey, Nonce: s.Nonce, Ciphertext: s.Ciphertext}
}

func (a sealedAttr) sealed() vault.Sealed {
	return vault.Sealed{KeyID: a.KeyID, DataKey: a.DataKey, Nonce: a.Nonce, Ciphertext: a.Ciphertext}
}
