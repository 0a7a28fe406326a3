/**
 * CMCD as a player sends it on a segment request: CTA-5004's own example, every key a player
 * fills in (sent as the `CMCD` query parameter, as hls.js and dash.js do by default).
 */
export const PLAYER_CMCD =
  'bl=21300,br=3200,bs,cid="faec5fc2-ac30-11ea-bb37-0242ac130002",d=4004,dl=18500,mtp=48100,nor="..%2F300kbps%2Ftrack.m4v",nrr="12323-48763",ot=v,pr=1.08,rtp=12000,sf=d,sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v,su,tb=6141';
