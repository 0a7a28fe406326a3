<?php
// Checks the edge's X-Edge-Signature on a PHP 8 origin (docs/reference.md §11).
//
//   require __DIR__ . '/verify-edge-signature.php';
//   if (!verify_edge_signature($_SERVER, [getenv('ORIGIN_SIGNING_KEY')])) {
//       http_response_code(403);
//       exit;
//   }
//
// $keys lists every secret accepted (the new one and, during a rotation, the old one).
// The public host comes from X-Forwarded-Host, which the edge sets; path and query from
// REQUEST_URI, exactly as the edge sent them.

declare(strict_types=1);

/**
 * The canonical string the edge signs: t, method, host, path and query, X-Edge-Pool,
 * X-Edge-Country, X-Edge-Revision, then "name:value" for each X-Edge-Attr-* header sorted by
 * its lower-case name, joined with "\n".
 *
 * @param array<string, string> $attrs lower-case header name => value
 */
function edge_signature_canonical(
    int $t,
    string $method,
    string $host,
    string $pathAndQuery,
    string $pool,
    string $country,
    string $revision,
    array $attrs
): string {
    ksort($attrs, SORT_STRING);
    $lines = [(string) $t, strtoupper($method), strtolower($host), $pathAndQuery, $pool, $country, $revision];
    foreach ($attrs as $name => $value) {
        $lines[] = $name . ':' . $value;
    }
    return implode("\n", $lines);
}

/**
 * True when the request described by $server (PHP's $_SERVER) carries a signature made with
 * one of $keys, no older (and no further in the future) than $maxAgeSeconds.
 *
 * @param array<string, mixed> $server
 * @param list<string> $keys
 */
function verify_edge_signature(array $server, array $keys, int $maxAgeSeconds = 300, ?int $now = null): bool
{
    $header = $server['HTTP_X_EDGE_SIGNATURE'] ?? null;
    if (!is_string($header)) {
        return false;
    }
    $t = null;
    $macs = [];
    foreach (explode(',', $header) as $part) {
        $eq = strpos($part, '=');
        if ($eq === false) {
            return false;
        }
        $name = trim(substr($part, 0, $eq));
        $value = trim(substr($part, $eq + 1));
        if ($name === 't') {
            if ($t !== null || preg_match('/^\d{1,12}$/', $value) !== 1) {
                return false;
            }
            $t = (int) $value;
        } elseif ($name === 'v1') {
            $macs[] = strtolower($value);
        }
    }
    if ($t === null || $macs === []) {
        return false;
    }
    if (abs(($now ?? time()) - $t) > $maxAgeSeconds) {
        return false;
    }
    $attrs = [];
    foreach ($server as $key => $value) {
        if (is_string($key) && str_starts_with($key, 'HTTP_X_EDGE_ATTR_') && is_string($value)) {
            // PHP turns "-" into "_"; attribute names never hold "_".
            $attrs['x-edge-attr-' . strtolower(str_replace('_', '-', substr($key, 17)))] = $value;
        }
    }
    $canonical = edge_signature_canonical(
        $t,
        (string) ($server['REQUEST_METHOD'] ?? ''),
        (string) ($server['HTTP_X_FORWARDED_HOST'] ?? ''),
        (string) ($server['REQUEST_URI'] ?? ''),
        (string) ($server['HTTP_X_EDGE_POOL'] ?? ''),
        (string) ($server['HTTP_X_EDGE_COUNTRY'] ?? ''),
        (string) ($server['HTTP_X_EDGE_REVISION'] ?? ''),
        $attrs
    );
    foreach ($keys as $key) {
        if (!is_string($key) || $key === '') {
            continue;
        }
        $expected = hash_hmac('sha256', $canonical, $key);
        foreach ($macs as $mac) {
            if (hash_equals($expected, $mac)) {
                return true;
            }
        }
    }
    return false;
}
