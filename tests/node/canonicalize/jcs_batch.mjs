// Oracle for tests/eventlog/test_hashing.py: canonicalise a batch of JSON values with the npm package
// `canonicalize` (RFC 8785 JCS) in one process.
// stdin: a JSON array of values. stdout: a JSON array of {canonical: base64(UTF-8), sha256: hex},
// or {error: message} for a value canonicalize refuses. Base64 keeps the comparison byte-exact.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const values = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const results = values.map((value) => {
  try {
    const bytes = Buffer.from(canonicalize(value), "utf8");
    return {
      canonical: bytes.toString("base64"),
      sha256: createHash("sha256").update(bytes).digest("hex"),
    };
  } catch (error) {
    return { error: String(error && error.message) };
  }
});
process.stdout.write(JSON.stringify(results));
