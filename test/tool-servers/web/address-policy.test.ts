import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refusedAddressReason, refusedHostnameReason } from '../../../tool-servers/web/extract/address-policy.js';

test('refusedAddressReason names the range of every non-public address', () => {
  const cases: Array<[string, string | undefined]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.10.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique local (private)'],
    ['fc00::1', 'unique local (private)'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a00:1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped cloud metadata'],
    ['64:ff9b::a00:1', 'NAT64 private'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2002:c0a8:101::1', '6to4 private'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'teredo'],
    // Public addresses, in every spelling, pass.
    ['93.184.215.14', undefined],
    ['8.8.8.8', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['64:ff9b::808:808', undefined],
    ['2002:808:808::1', undefined],
    ['2606:4700:4700::1111', undefined],
  ];
  for (const [address, reason] of cases) assert.equal(refusedAddressReason(address), reason, address);
});

test('refusedAddressReason refuses what is not an IP address at all', () => {
  assert.equal(refusedAddressReason('example.com'), 'not an IP address');
});

test('refusedHostnameReason refuses local-only names before DNS', () => {
  for (const name of ['localhost', 'LOCALHOST.', 'api.localhost', 'printer.local', 'metadata.google.internal', 'router.home.arpa']) {
    assert.equal(refusedHostnameReason(name), 'a local-only name', name);
  }
  for (const name of ['example.com', 'localhost.example.com', 'internal.example.org'])
    assert.equal(refusedHostnameReason(name), undefined, name);
});
