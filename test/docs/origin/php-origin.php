<?php
// A PHP origin for the tests: answers 200 "verified" when the edge's signature checks out with
// one of the keys in EDGE_KEYS (comma-separated), else 403 "refused".
declare(strict_types=1);
require getenv('EDGE_VERIFY_PHP');
$keys = array_values(array_filter(explode(',', (string) getenv('EDGE_KEYS'))));
$now = getenv('EDGE_NOW') === false ? null : (int) getenv('EDGE_NOW');
$ok = verify_edge_signature($_SERVER, $keys, 300, $now);
http_response_code($ok ? 200 : 403);
header('Content-Type: text/plain');
echo $ok ? 'verified' : 'refused';
