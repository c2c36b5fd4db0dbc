package com.acme.orders;

import static org.junit.Assert.assertEquals;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.annotation.SelectorType;
import org.junit.Test;

// The annotated inner class only carries attributes for the test to read by reflection: an inner
// (non-static) class is never a bean, so no container is built for it and nothing is refused.
public class ListenerContainerTest {

    @Test
    public void copiesAnnotationAttributes() {
        RocketMQMessageListener anno = AttributeCarrier.class.getAnnotation(RocketMQMessageListener.class);
        assertEquals("abc1", anno.consumerGroup());
    }

    // ok: SG906
    @RocketMQMessageListener(consumerGroup = "abc1", topic = "test", selectorType = SelectorType.SQL92)
    class AttributeCarrier {
    }
}
