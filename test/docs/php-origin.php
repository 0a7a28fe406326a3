<?php
// A PHP origin for the tests: answers 200 "verified" (and X-Verified: yes, for HEAD) when the
// edge's signature checks out with one of the keys in EDGE_KEYS (comma-separated), else 403.
declare(strict_types=1);
require getenv('EDGE_VERIFY_PHP');
$keys = array_values(array_filter(explode(',', (string) getenv('EDGE_KEYS'))));
$ok = verify_edge_signature($_SERVER, $keys);
http_response_code($ok ? 200 : 403);
header('Content-Type: text/plain');
header('X-Verified: ' . ($ok ? 'yes' : 'no'));
echo $ok ? 'verified' : 'refused';
