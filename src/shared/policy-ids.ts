/**
 * The policy types and the parts of a `policy_id`, as the reference server names them: the
 * vocabulary the policy store's rows and the policy services share. The grammar that parses ids
 * and the errors it raises stay in src/services/policy/policy-model.ts.
 */
export const POLICY_TYPES = [
  'axis_bundle',
  'clothing_block',
  'descriptor_layer',
  'image_block',
  'location',
  'manifest_bundle',
  'prompt',
  'registry',
  'species_block',
  'tone_profile',
] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

export interface PolicyIdParts {
  policyType: PolicyType;
  namespace: string;
  policyKey: string;
}

/** What a policy audit event records: an activation pointer moved, or a publish run. */
export const POLICY_AUDIT_EVENT_TYPES = ['activation', 'publish'] as const;
export type PolicyAuditEventType = (typeof POLICY_AUDIT_EVENT_TYPES)[number];
