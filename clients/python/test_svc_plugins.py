"""The installer's Ed25519 verification against RFC 8032's test vectors (section 7.1, TESTs 1-3)
and the forgeries it must refuse. Run by test/plugin-installer.e2e-spec.ts:

    python3 -m unittest clients/python/test_svc_plugins.py
"""
import base64
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svc_plugins  # noqa: E402

# (public key, message, signature), hex, as RFC 8032 7.1 prints them.
VECTORS = [
    (
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
]


def vector(index):
    key, message, signature = VECTORS[index]
    return bytes.fromhex(key), bytes.fromhex(message), bytes.fromhex(signature)


def flipped(data, index, bit=0):
    changed = bytearray(data)
    changed[index] ^= 1 << bit
    return bytes(changed)


class Ed25519Verify(unittest.TestCase):
    def test_rfc_8032_vectors_verify(self):
        for index in range(len(VECTORS)):
            with self.subTest(test=index + 1):
                self.assertTrue(svc_plugins.ed25519_verify(*vector(index)))

    def test_another_message_or_key_fails(self):
        key, message, signature = vector(1)
        self.assertFalse(svc_plugins.ed25519_verify(key, flipped(message, 0), signature))
        self.assertFalse(svc_plugins.ed25519_verify(key, message + b"\x00", signature))
        self.assertFalse(svc_plugins.ed25519_verify(vector(2)[0], message, signature))

    def test_a_changed_signature_fails(self):
        key, message, signature = vector(2)
        for index in (0, 31, 32, 63):
            with self.subTest(byte=index):
                self.assertFalse(svc_plugins.ed25519_verify(key, message, flipped(signature, index)))

    def test_s_not_below_the_group_order_fails(self):
        # S + L is the same point multiple: a malleated signature that RFC 8032 requires refusing.
        key, message, signature = vector(0)
        s = int.from_bytes(signature[32:], "little") + svc_plugins._L
        self.assertLess(s, 2**256)
        self.assertFalse(svc_plugins.ed25519_verify(key, message, signature[:32] + s.to_bytes(32, "little")))

    def test_keys_that_are_no_point_fail(self):
        _, message, signature = vector(0)
        not_reduced = (2**255 - 19 + 1).to_bytes(32, "little")  # y >= p
        self.assertFalse(svc_plugins.ed25519_verify(not_reduced, message, signature))
        self.assertFalse(svc_plugins.ed25519_verify(b"\x00" * 31, message, signature))
        self.assertFalse(svc_plugins.ed25519_verify(vector(0)[0], message, signature[:63]))

    def test_the_key_is_read_from_its_pem(self):
        key = vector(0)[0]
        der = bytes.fromhex("302a300506032b6570032100") + key
        pem = "-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(der).decode() + "\n-----END PUBLIC KEY-----\n"
        self.assertEqual(svc_plugins.public_key_of_pem(pem), key)
        with self.assertRaises(svc_plugins.Refused):
            svc_plugins.public_key_of_pem(pem.replace("MCowBQYDK2Vw", "MCowBQYDK2Vx"))


if __name__ == "__main__":
    unittest.main()
